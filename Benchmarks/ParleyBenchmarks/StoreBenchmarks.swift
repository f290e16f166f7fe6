import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyStore
import ParleyTesting

/// Item writes on each store engine: `appendItem` calls per second from one conversation
/// writing item after item (a session's pace is one write at a time), and from 16
/// conversations writing at once (a busy server), with the latency of one write. SQLite is a
/// file in a temporary directory (WAL, `synchronous=NORMAL`: no fsync per commit);
/// PostgreSQL a throwaway local server with its defaults (fsync at every commit), reached
/// over loopback TCP through the store's pool of 4 connections.
func runStoreBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let sqlite = try SQLiteStore(path: directory.appendingPathComponent("parley.sqlite").path)
    var results = try await measureItemWrites(sqlite, engine: "SQLite", quick: quick)
    sqlite.close()
    results += try await ThrowawayPostgres.with { server in
        let postgres = try PostgresStore(url: try await server.createDatabase())
        let figures = try await measureItemWrites(postgres, engine: "PostgreSQL", quick: quick)
        await postgres.close()
        return figures
    }
    return results
}

private func measureItemWrites(_ store: any ParleyStore, engine: String, quick: Bool) async throws -> [BenchmarkResult] {
    let clock = ContinuousClock()
    let message = ChatMessage.assistant(text: String(repeating: "A sentence of a spoken reply, as heard. ", count: 5), toolCalls: [], interrupted: false)
    let items = quick ? 300 : 3_000
    var results: [BenchmarkResult] = []

    // One conversation, one write at a time.
    var latencies: [Double] = []
    let started = clock.now
    for index in 0..<items {
        let before = clock.now
        try await store.appendItem(ItemRecord(id: "item_single_\(index)", conversationID: "conv_single", message: message, createdAt: Date()))
        latencies.append(((clock.now - before) / .seconds(1)) * 1000)
    }
    let sequentialRate = Double(items) / ((clock.now - started) / .seconds(1))
    results.append(BenchmarkResult(area: "store", name: "\(engine): item writes/s, one conversation, one write at a time", value: sequentialRate, unit: "items/s", target: "", meetsTarget: nil))
    results.append(BenchmarkResult(area: "store", name: "\(engine): one item write, p50", value: percentile(latencies, 50), unit: "ms", target: "", meetsTarget: nil))
    results.append(BenchmarkResult(area: "store", name: "\(engine): one item write, p99", value: percentile(latencies, 99), unit: "ms", target: "", meetsTarget: nil))

    // 16 conversations writing at once.
    let conversations = 16
    let each = items / conversations
    let concurrentStart = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for conversation in 0..<conversations {
            group.addTask {
                for index in 0..<each {
                    try await store.appendItem(ItemRecord(
                        id: "item_\(conversation)_\(index)", conversationID: "conv_\(conversation)", message: message, createdAt: Date()
                    ))
                }
            }
        }
        try await group.waitForAll()
    }
    let concurrentRate = Double(conversations * each) / ((clock.now - concurrentStart) / .seconds(1))
    results.append(BenchmarkResult(area: "store", name: "\(engine): item writes/s, \(conversations) conversations at once", value: concurrentRate, unit: "items/s", target: "", meetsTarget: nil))
    return results
}
