import Foundation
import ParleyTesting
import Testing
@testable import ParleyStore

/// The store's engines, for tests that run against each.
enum StoreEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// A new, empty place for a store of this engine: a file in a fresh directory, or a
    /// fresh database on the suite's throwaway PostgreSQL.
    func freshLocation() async throws -> StoreLocation {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return StoreLocation(engine: self, address: directory.appendingPathComponent("parley.sqlite").path)
        case .postgres:
            let server = try #require(PostgresFixture.server, "the suite needs the .throwawayPostgres trait")
            return StoreLocation(engine: self, address: try await server.createDatabase())
        }
    }
}

/// Where a test's store lives; opening it again shows what a restart would find.
struct StoreLocation: Sendable {
    var engine: StoreEngine
    /// The SQLite file's path or the PostgreSQL database's URL.
    var address: String

    func open() throws -> any ParleyStore {
        switch engine {
        case .sqlite: try SQLiteStore(path: address)
        case .postgres: try PostgresStore(url: address)
        }
    }

    /// The schema version the database records.
    func schemaVersion() throws -> Int? {
        switch engine {
        case .sqlite:
            try SQLiteDatabase(path: address).query("PRAGMA user_version").first?.first?.integer.map(Int.init)
        case .postgres:
            try PostgresConnection(url: address).query("SELECT version FROM parley_schema").rows.first?.first?.flatMap { Int($0) }
        }
    }
}

/// The throwaway PostgreSQL of the running suite.
enum PostgresFixture {
    @TaskLocal static var server: ThrowawayPostgres?
}

/// Gives a suite a throwaway PostgreSQL of its own (`PostgresFixture.server`), started
/// before its first test and stopped after its last.
struct ThrowawayPostgresTrait: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await ThrowawayPostgres.with { server in
            try await PostgresFixture.$server.withValue(server) { try await function() }
        }
    }
}

extension Trait where Self == ThrowawayPostgresTrait {
    /// A throwaway PostgreSQL for the suite (see `ThrowawayPostgresTrait`).
    static var throwawayPostgres: Self { Self() }
}
