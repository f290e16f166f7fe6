import Foundation

/// A throwaway local PostgreSQL for tests, run by the repository's `scripts/postgres`: a
/// fresh cluster of its own (named, so several run side by side), on 127.0.0.1 and a free
/// port, removed when it stops.
///
/// ```swift
/// try await ThrowawayPostgres.with { server in
///     let url = try await server.createDatabase()
///     let store = try PostgresStore(url: url)
/// }
/// ```
public struct ThrowawayPostgres: Sendable {
    /// The server's name for `scripts/postgres` (`PARLEY_POSTGRES_NAME`).
    public let name: String
    /// The URL of its `postgres` database, as the superuser `postgres`.
    public let url: String

    /// An error from `scripts/postgres`, with what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// `scripts/postgres` in this checkout.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/postgres").standardizedFileURL

    /// Starts a new server.
    /// - Throws: `Failure` when the script fails (PostgreSQL not installed: run `scripts/setup`).
    public static func start() async throws -> ThrowawayPostgres {
        let name = "test-" + UUID().uuidString.prefix(8).lowercased()
        return ThrowawayPostgres(name: name, url: try await run(name, ["start"]))
    }

    /// Starts a server, runs `body` with it and stops it, whatever `body` did.
    public static func with<T: Sendable>(_ body: (ThrowawayPostgres) async throws -> T) async throws -> T {
        let server = try await start()
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Creates a fresh, empty database and returns its URL.
    public func createDatabase() async throws -> String {
        try await Self.run(name, ["createdb", "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "_")])
    }

    /// Restarts the server (fast shutdown: open connections are closed), keeping its data;
    /// returns once it accepts connections again.
    public func restart() async throws {
        _ = try await Self.run(name, ["restart"])
    }

    /// Stops the server and removes its files.
    public func stop() async {
        _ = try? await Self.run(name, ["stop"])
    }

    /// Runs the script for server `name`; returns the last line it printed on standard output.
    private static func run(_ name: String, _ arguments: [String]) async throws -> String {
        let process = Subprocess()
        process.executableURL = script
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["PARLEY_POSTGRES_NAME": name]) { _, new in new }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let printed = TextCollector()
        let complained = TextCollector()
        try process.run()
        let outputReader = PipeReader(output.fileHandleForReading) { printed.append($0) }
        let errorReader = PipeReader(errors.fileHandleForReading) { complained.append($0) }
        let status = await process.exitStatus(within: .seconds(120))
        if status == nil { process.terminate() }
        await outputReader.end()
        await errorReader.end()
        guard status == 0 else {
            throw Failure(description: "scripts/postgres \(arguments.joined(separator: " ")) failed (\(status.map { "status \($0)" } ?? "no answer in 120 s")): \(complained.text)")
        }
        return printed.text.split(separator: "\n").last.map(String.init) ?? ""
    }
}

/// Text a child writes, collected on its pipe's reading thread. `@unchecked Sendable`:
/// `data` is guarded by `lock`.
private final class TextCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ chunk: Data) { lock.withLock { data.append(chunk) } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}
