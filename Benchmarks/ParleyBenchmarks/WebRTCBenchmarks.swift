import Foundation
import ParleyCore
import ParleyServer

/// The `webrtc` area: voice-to-voice over a WebRTC call against the WebSocket on the same
/// turns, and what calls cost the server. The server runs in this process with instant
/// providers (so the figures are the transports' and the pipeline's own); the client is
/// aiortc (`Benchmarks/webrtc_bench_client.py`) in a child process on the same machine.
func runWebRTCBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    var settings = ServerSettings()
    settings.port = 0
    settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-webrtc-\(UUID().uuidString)")
    let secret = "parley-benchmark-secret-0123456789"
    let app = try ParleyApp(settings: settings, secret: secret, providers: ProviderSet(
        recognizer: InstantRecognizer(), languageModel: InstantLanguageModel(), synthesizer: InstantSynthesizer(),
        makeVoiceActivityDetector: { EnergyVAD() }, makeResampler: { from, to in BenchmarkServer.resampler(from: from, to: to) }
    ), log: .silent)
    try app.start()
    defer { Task { await app.shutdown() } }
    let url = "http://127.0.0.1:\(app.port)/v1/realtime/calls"
    let turns = quick ? 3 : 10
    var results: [BenchmarkResult] = []

    for transport in ["websocket", "webrtc"] {
        let lines = try await WebRTCBenchClient.run(["latency", "--url", url, "--token", secret, "--transport", transport, "--turns", "\(turns)"])
        let figures = lines.compactMap { $0.hasPrefix("turn ") ? Double($0.dropFirst(5)) : nil }
        guard figures.count == turns else { throw WebRTCBenchClient.Failure(description: "\(transport): \(lines.joined(separator: "\n"))") }
        let label = transport == "webrtc" ? "WebRTC (Opus, aiortc)" : "WebSocket (pcm16 events)"
        results.append(BenchmarkResult(
            area: "webrtc", name: "voice-to-voice p50, \(label): last speech frame sent → first answer audio received, instant providers, 300 ms VAD silence",
            value: percentile(figures, 50), unit: "ms", target: "", meetsTarget: nil
        ))
    }

    // Calls held at once: the server's CPU and memory per call while each speaks 1 s in 4.
    let calls = quick ? 4 : 20
    let threadsBefore = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    let residentBefore = ProcessFigures.residentBytes(pid: getpid()) ?? 0
    let connected = ConnectedSnapshot()
    let lines = try await WebRTCBenchClient.run(
        ["load", "--url", url, "--token", secret, "--calls", "\(calls)", "--seconds", quick ? "8" : "20"],
        onLine: { line in if line.hasPrefix("connected") { connected.take() } }
    )
    let (cpuAtConnect, wallAtConnect, residentConnected, threadsConnected) = connected.figures
    let held = ContinuousClock.now - wallAtConnect
    guard lines.contains("done"), lines.contains("connected \(calls)") else {
        throw WebRTCBenchClient.Failure(description: "load: \(lines.joined(separator: "\n"))")
    }
    let seconds = Double(held.components.seconds) + Double(held.components.attoseconds) / 1e18
    let cpu = (ProcessFigures.ownCPUSeconds() - cpuAtConnect) / seconds
    results += [
        BenchmarkResult(area: "webrtc", name: "calls held at once, each speaking 1 s in 4 (aiortc peers on the same 2 cores)", value: Double(calls), unit: "calls", target: "", meetsTarget: nil),
        BenchmarkResult(area: "webrtc", name: "server CPU per held call (Opus decode + encode, SRTP, VAD, session)", value: cpu / Double(calls) * 100, unit: "% of a core", target: "", meetsTarget: nil),
        BenchmarkResult(area: "webrtc", name: "server memory per held call (resident, connected − before)", value: Double(residentConnected - residentBefore) / Double(calls) / 1_048_576, unit: "MiB", target: "", meetsTarget: nil),
        BenchmarkResult(area: "webrtc", name: "server threads added for \(calls) calls", value: Double(threadsConnected - threadsBefore), unit: "threads", target: "", meetsTarget: nil),
    ]
    return results
}

/// The server's figures at the moment every call was connected.
///
/// `@unchecked Sendable`: `figures` is guarded by `lock`.
private final class ConnectedSnapshot: @unchecked Sendable {
    private let lock = NSLock()
    private var taken = (cpu: 0.0, at: ContinuousClock.now, resident: 0, threads: 0)

    func take() {
        let figures = (
            ProcessFigures.ownCPUSeconds(), ContinuousClock.now, ProcessFigures.residentBytes(pid: getpid()) ?? 0,
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
        )
        lock.withLock { taken = figures }
    }

    var figures: (Double, ContinuousClock.Instant, Int, Int) { lock.withLock { taken } }
}

/// Runs `Benchmarks/webrtc_bench_client.py` with the test virtualenv's Python.
enum WebRTCBenchClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../webrtc_bench_client.py").standardizedFileURL

    /// The client's output lines; `onLine` sees each as it arrives.
    static func run(_ arguments: [String], onLine: @escaping @Sendable (String) -> Void = { _ in }) async throws -> [String] {
        let python = ProcessInfo.processInfo.environment["PARLEY_PYTHON"]
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/parley/venv/bin/python").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        // Blocking reads on a thread of their own: the server under test has the cooperative pool.
        let reader = output.fileHandleForReading
        let lines: [String] = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var lines: [String] = []
                var buffer = Data()
                while true {
                    let piece = reader.availableData
                    if piece.isEmpty { break }
                    buffer += piece
                    while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                        buffer.removeSubrange(buffer.startIndex...newline)
                        lines.append(line)
                        onLine(line)
                    }
                }
                process.waitUntilExit()
                continuation.resume(returning: lines)
            }
        }
        guard process.terminationStatus == 0 else { throw Failure(description: "client exited \(process.terminationStatus): \(lines.joined(separator: "\n"))") }
        return lines
    }
}
