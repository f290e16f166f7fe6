import BenchmarkHarness
import Foundation
import ParleyNet

/// ParleyNet against raw libwebsockets, side by side on the same machine: tiny GET requests
/// per second (load from `wrk`) and WebSocket echo round trips (from a small C client).
///
/// The raw server and the client are C programs in `Benchmarks/RawLWS`, built with
/// `scripts/build-bench-tools`. Targets from the issue: the Swift layer keeps at least 70% of the
/// raw GET throughput and adds at most 50 µs to the round-trip median.
func runNetworkBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let tools = try await NetworkBenchmarkTools.build()
    var router = Router()
    router.get("/") { _ in .text("ok") }
    router.webSocket("/echo", WebSocketRoute(
        decide: { _ in .accept(subprotocol: nil) },
        onConnection: { connection, _ in
            for await message in connection.messages { try? connection.send(message) }
        }))
    let swiftServer = HTTPServer(router: router)
    try swiftServer.start()
    let rawServer = try await RawLWSServer.start(tools.server)
    defer { rawServer.stop() }
    progress("network: ParleyNet on port \(swiftServer.port), raw lws on port \(rawServer.port)")

    var results: [BenchmarkResult] = []
    // The machine is shared and its speed drifts: each figure compares the two servers in
    // back-to-back pairs of runs and keeps the median over the pairs.
    for connections in quick ? [50] : [1, 50, 200] {
        progress("network: GET with \(connections) connections")
        let runs = try await measureInPairs(quick ? 1 : 7, rawServer: rawServer, swiftPort: swiftServer.port) { port in
            try await tools.getThroughput(port: port, connections: connections, seconds: 2)
        }
        let rawRuns = runs.map(\.raw)
        let swiftRuns = runs.map(\.parleyNet)
        let raw = percentile(rawRuns, 50)
        let swift = percentile(swiftRuns, 50)
        let ratio = percentile(runs.map { $0.parleyNet / $0.raw * 100 }, 50)
        results += [
            BenchmarkResult(area: "network", name: "GET req/s, \(connections) connections, raw lws", value: raw,
                            unit: "req/s", target: "", meetsTarget: nil),
            BenchmarkResult(area: "network", name: "GET req/s, \(connections) connections, ParleyNet", value: swift,
                            unit: "req/s", target: "", meetsTarget: nil),
            BenchmarkResult(area: "network", name: "GET throughput ParleyNet/raw, \(connections) connections", value: ratio,
                            unit: "%", target: ">= 70%", meetsTarget: ratio >= 70),
        ]
    }

    for (connections, bytes) in [(1, 1024), (1, 16384), (100, 1024), (100, 16384)] {
        // A round sends one message per connection. The host's slow stretches last about a
        // 100-connection run, and one run's p50 moves by ±50 µs with them: many short pairs
        // outlast that noise better than a few long runs.
        let rounds = connections == 1 ? (quick ? 500 : 2000) : (quick ? 50 : 200)
        let pairs = quick ? 1 : (connections == 1 ? 3 : 21)
        progress("network: WebSocket echo, \(bytes) bytes, \(connections) connections")
        let runs = try await measureInPairs(pairs, rawServer: rawServer, swiftPort: swiftServer.port) { port in
            try await tools.roundTrip(port: port, connections: connections, bytes: bytes, rounds: rounds)
        }
        let rawRuns = runs.map(\.raw)
        let swiftRuns = runs.map(\.parleyNet)
        let raw = (p50: percentile(rawRuns.map(\.p50), 50), p99: percentile(rawRuns.map(\.p99), 50))
        let swift = (p50: percentile(swiftRuns.map(\.p50), 50), p99: percentile(swiftRuns.map(\.p99), 50))
        let label = "\(bytes / 1024) KB, \(connections) connection\(connections == 1 ? "" : "s")"
        let added = percentile(runs.map { $0.parleyNet.p50 - $0.raw.p50 }, 50)
        results += [
            BenchmarkResult(area: "network", name: "WS RTT p50, \(label), raw lws", value: raw.p50, unit: "µs", target: "", meetsTarget: nil),
            BenchmarkResult(area: "network", name: "WS RTT p99, \(label), raw lws", value: raw.p99, unit: "µs", target: "", meetsTarget: nil),
            BenchmarkResult(area: "network", name: "WS RTT p50, \(label), ParleyNet", value: swift.p50, unit: "µs", target: "", meetsTarget: nil),
            BenchmarkResult(area: "network", name: "WS RTT p99, \(label), ParleyNet", value: swift.p99, unit: "µs", target: "", meetsTarget: nil),
            BenchmarkResult(area: "network", name: "WS RTT p50 added by ParleyNet, \(label)", value: added, unit: "µs",
                            target: "<= +50 µs", meetsTarget: added <= 50),
        ]
    }
    await swiftServer.shutdown()
    return results
}

/// Measures the raw server and ParleyNet (on `swiftPort`) `pairs` times with `measure` (given a
/// port), back to back: raw first in even pairs and ParleyNet first in odd ones, which cancels
/// a drift of the machine's speed within a pair. The raw server is paused while ParleyNet is
/// measured. Each pair's figures go to the progress log, so a median can be traced to its runs.
private func measureInPairs<Figure>(
    _ pairs: Int, rawServer: RawLWSServer, swiftPort: Int, _ measure: (Int) async throws -> Figure
) async throws -> [(raw: Figure, parleyNet: Figure)] {
    var runs: [(raw: Figure, parleyNet: Figure)] = []
    for pair in 0..<pairs {
        if pair.isMultiple(of: 2) {
            let raw = try await measure(rawServer.port)
            runs.append((raw, try await rawServer.whilePaused { try await measure(swiftPort) }))
        } else {
            let parleyNet = try await rawServer.whilePaused { try await measure(swiftPort) }
            runs.append((try await measure(rawServer.port), parleyNet))
        }
        progress("  pair \(pair + 1) of \(pairs): raw \(runs[pair].raw), ParleyNet \(runs[pair].parleyNet)")
    }
    return runs
}

/// The external programs the network benchmark drives.
struct NetworkBenchmarkTools {
    let server: URL
    let roundTripClient: URL
    let wrk: URL

    /// Builds the C baseline (if needed) and finds `wrk`.
    static func build() async throws -> NetworkBenchmarkTools {
        let folder = try await BenchmarkTools.folder()
        guard let wrk = ["/usr/bin/wrk", "/usr/local/bin/wrk", "/opt/homebrew/bin/wrk"].first(where: FileManager.default.isExecutableFile) else {
            throw BenchmarkToolError("wrk is not installed (scripts/setup installs it)")
        }
        return NetworkBenchmarkTools(
            server: folder.appendingPathComponent("raw_lws_server"),
            roundTripClient: folder.appendingPathComponent("ws_rtt_client"),
            wrk: URL(fileURLWithPath: wrk))
    }

    /// Requests per second `wrk` reaches on `GET /` with `connections` connections.
    func getThroughput(port: Int, connections: Int, seconds: Int) async throws -> Double {
        let output = try await runProcess(wrk, [
            "-t1", "-c\(connections)", "-d\(seconds)s", "http://127.0.0.1:\(port)/",
        ])
        if output.contains("Non-2xx") || output.contains("Socket errors") {
            throw BenchmarkToolError("wrk saw errors:\n\(output)")
        }
        guard let line = output.components(separatedBy: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
              let value = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces))
        else { throw BenchmarkToolError("unexpected wrk output:\n\(output)") }
        return value
    }

    /// Echo round-trip percentiles in microseconds.
    func roundTrip(port: Int, connections: Int, bytes: Int, rounds: Int) async throws -> (p50: Double, p99: Double) {
        let output = try await runProcess(roundTripClient, ["\(port)", "/echo", "\(connections)", "\(bytes)", "\(rounds)"])
        let fields = output.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count == 3 else { throw BenchmarkToolError("unexpected ws_rtt_client output: \(output)") }
        return (fields[0], fields[1])
    }
}

/// The raw libwebsockets server running as a child process.
final class RawLWSServer {
    let process: Process
    let port: Int

    private init(process: Process, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts the server and reads the port it printed.
    static func start(_ executable: URL) async throws -> RawLWSServer {
        let process = Process()
        process.executableURL = executable
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = await readFirstLine(output.fileHandleForReading)
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)), port > 0 else {
            process.terminate()
            throw BenchmarkToolError("raw_lws_server did not report a port: \(line)")
        }
        return RawLWSServer(process: process, port: port)
    }

    /// Runs `body` with the server stopped (SIGSTOP), then lets it continue.
    ///
    /// After a test, lws 4.1 keeps polling the sockets its clients left behind (a closed
    /// keep-alive connection stays readable until its timeout) and spins a core meanwhile; on
    /// a 2-core machine that would be taken from the server being measured next.
    func whilePaused<Result>(_ body: () async throws -> Result) async throws -> Result {
        kill(process.processIdentifier, SIGSTOP)
        defer { kill(process.processIdentifier, SIGCONT) }
        return try await body()
    }

    /// Stops the server.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Reports what the benchmark is doing on standard error (standard output carries the results).
private func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
