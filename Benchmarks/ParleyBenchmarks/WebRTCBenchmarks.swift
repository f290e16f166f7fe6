import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyServer

/// The `webrtc` area: voice-to-voice over a WebRTC call against the WebSocket on the same
/// turns, and what calls cost the server, first with instant providers (so the figures are the
/// transports' and the pipeline's own), then how many calls it holds with the defaults a user
/// gets (`WebRTCDefaultsBenchmarks`). The server runs in this process; the clients are aiortc
/// (`Benchmarks/webrtc_bench_client.py`) in child processes on the same machine, and the calls
/// held come from capacity searches (`WebRTCCapacitySearch`).
func runWebRTCBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    var settings = ServerSettings()
    settings.port = 0
    settings.maximumSessions = 10_000
    settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-webrtc-\(UUID().uuidString)")
    let app = try ParleyApp(settings: settings, secret: BenchmarkServer.defaultSecret, providers: ProviderSet(
        recognizer: InstantRecognizer(), languageModel: InstantLanguageModel(), synthesizer: InstantSynthesizer(),
        makeVoiceActivityDetector: { EnergyVAD() }, makeResampler: { from, to in BenchmarkServer.resampler(from: from, to: to) }
    ), log: .silent)
    try app.start()
    let overhead: [BenchmarkResult]
    do {
        overhead = try await pipelineOverheadFigures(port: app.port, quick: quick)
    } catch {
        await app.shutdown()
        throw error
    }
    // Shut down before the next server starts: the searches time the one loop thread named parley-rtc.
    await app.shutdown()
    return overhead + (try await WebRTCDefaultsBenchmarks.measure(quick: quick))
}

/// Voice-to-voice by WebRTC and by WebSocket, and the calls held, with the instant providers of
/// the server at `port`.
private func pipelineOverheadFigures(port: Int, quick: Bool) async throws -> [BenchmarkResult] {
    let secret = BenchmarkServer.defaultSecret
    let url = "http://127.0.0.1:\(port)/v1/realtime/calls"
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

    // Calls held: a capacity search with light load peers on the same two cores.
    let search = WebRTCCapacitySearch(url: url, token: secret, processes: 2, seconds: quick ? 8 : 20, turnPeriod: 4, question: nil,
                                      voiceToVoiceP99Bound: (1_000, "p99 ≤ 1000 ms"))
    let outcome = try await search.run(CapacitySearch(ladder: [quick ? 4 : 20], ceiling: quick ? 16 : 640, precision: quick ? 0.5 : 0.1))
    let peers = search.peers
    let failedNext = outcome.failed.map { "\($0.calls) calls failed: \($0.failure ?? "")" } ?? "no count tried failed"
    let figure = { (name: String, value: Double, unit: String) in
        BenchmarkResult(area: "webrtc", name: name, value: value, unit: unit, target: "", meetsTarget: nil)
    }
    results.append(.capacity(
        area: "webrtc",
        name: "concurrent calls, instant providers, energy VAD, a 220 Hz tone (pipeline overhead, not the defaults), server and \(peers), \(search.rule) (\(failedNext); bound: \(outcome.bound))",
        bracket: outcome.bracket, noun: "calls"))
    results.append(figure(
        "server memory per call, first trial of the search (\(outcome.first.calls) calls; resident, connected − before)", outcome.first.residentBytesPerCall / 1_048_576, "MiB"))
    guard let held = outcome.held else { return results }
    results += [
        figure("voice-to-voice p99 at the largest count held (last speech frame sent → first answer packet received, instant providers)", percentile(held.voiceToVoiceMs, 99), "ms"),
        figure("server CPU per call at the largest count held (Opus decode + encode, SRTP, VAD, session)", held.serverCPUPerCall * 100, "% of a core"),
        figure("server WebRTC loop thread CPU per call at the largest count held (one thread: every call's ICE, DTLS, SRTP, pacing)", held.loopThreadCPUPerCall * 100, "% of a core"),
        figure("load peer CPU per call at the largest count held (\(peers))", held.peerCPUPerCall * 100, "% of a core"),
        figure("calls the server's own CPU would carry on 2 cores, extrapolated (200 % ÷ server CPU per call)", 2 / held.serverCPUPerCall, "calls"),
        figure("calls the server's WebRTC loop thread would carry, extrapolated (100 % of its core ÷ its CPU per call)", 1 / held.loopThreadCPUPerCall, "calls"),
        figure("server threads added for \(held.calls) calls", Double(held.threadsAdded), "threads"),
    ]
    return results
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
