import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyNet
import ParleyOpenAI
import ParleyTesting

/// The OpenAI chat client's overhead: chunks parsed per second for a 2,000-chunk stream from
/// the fake server, and the latency it adds from the first byte on the wire to the first `.textDelta`.
func runAgentBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let server = try FakeOpenAIServer()
    do {
        let results = try await measureChatClient(server: server, quick: quick)
        await server.shutdown()
        return results
    } catch {
        await server.shutdown()
        throw error
    }
}

private func measureChatClient(server: FakeOpenAIServer, quick: Bool) async throws -> [BenchmarkResult] {
    let model = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: server.baseURL, model: "bench", retry: .none))
    let clock = ContinuousClock()
    var results: [BenchmarkResult] = []

    // Throughput: 2,000 content chunks sent back to back, first delta to finish.
    let chunkCount = 2_000
    let runs = quick ? 2 : 5
    var rates: [Double] = []
    for _ in 0..<runs {
        server.enqueueChat(.text((0..<chunkCount).map { "tok\($0) " }))
        var first: ContinuousClock.Instant?
        var deltas = 0
        for try await event in model.stream(ChatRequest(messages: [.user("go")])) {
            if case .textDelta = event {
                if first == nil { first = clock.now }
                deltas += 1
            }
        }
        guard deltas == chunkCount, let first else { throw AgentBenchmarkFailure("expected \(chunkCount) deltas, got \(deltas)") }
        rates.append(Double(chunkCount - 1) / (clock.now - first).seconds)
    }
    results.append(BenchmarkResult(
        area: "agent", name: "chat stream chunks/s, 2,000-chunk stream over loopback HTTP",
        value: percentile(rates, 50), unit: "chunks/s", target: "", meetsTarget: nil
    ))

    // Latency: first chunk handed to the server → first .textDelta seen by the consumer.
    let samples = quick ? 30 : 200
    var latencies: [Double] = []
    for _ in 0..<samples {
        server.enqueueChat(FakeChatScript(steps: [.text("Hi"), .finish("stop"), .done], timeToFirstChunk: .milliseconds(3)))
        var received: ContinuousClock.Instant?
        for try await event in model.stream(ChatRequest(messages: [.user("go")])) {
            if case .textDelta = event, received == nil { received = clock.now }
        }
        guard let received, let sent = server.firstChunkInstants.last else { throw AgentBenchmarkFailure("no first chunk") }
        latencies.append((received - sent).seconds * 1000)
    }
    let p50 = percentile(latencies, 50)
    results.append(BenchmarkResult(
        area: "agent", name: "first byte on the wire -> first .textDelta, p50",
        value: p50, unit: "ms", target: "<= 1 ms", meetsTarget: p50 <= 1
    ))
    results.append(BenchmarkResult(
        area: "agent", name: "first byte on the wire -> first .textDelta, p95",
        value: percentile(latencies, 95), unit: "ms", target: "", meetsTarget: nil
    ))
    return results
}

/// A benchmark run that did not produce what it measures.
struct AgentBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    /// The duration in seconds.
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
