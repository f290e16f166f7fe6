import Foundation
import ParleyCore

/// Call recordings: what a recorded session costs. 20 calls of 60 s each (5 in quick mode)
/// are fed through `CallRecorder` as sessions feed it — the user's audio in 20 ms chunks
/// at 24 kHz, a 3 s agent reply every 10 s in 100 ms chunks, every other reply cut after
/// 1.5 s — then finished. CPU is this process's (user + system, the recordings queue's
/// mixing and writes plus making the audio) over the seconds of calls recorded; size is the
/// WAV bytes per minute of call.
func runRecordingBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-recordings-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let calls = quick ? 5 : 20
    let seconds = 60
    let userChunk = (0..<480).map { Int16(2_000 * sin(Double($0) * 0.26)) }
    let agentChunk = (0..<2_400).map { Int16(3_000 * sin(Double($0) * 0.115)) }

    let cpuBefore = ProcessFigures.ownCPUSeconds()
    var recorders: [CallRecorder] = []
    for call in 0..<calls {
        let recorder = try CallRecorder(url: directory.appendingPathComponent("conv_\(call).wav"), makeResampler: VoiceSessionProviders.sincResampler)
        recorders.append(recorder)
    }
    // The calls run side by side, 20 ms at a time, as a server's sessions would feed them.
    for tick in 0..<(seconds * 50) {
        for recorder in recorders {
            recorder.recordUser(userChunk, sampleRate: 24_000)
            let reply = tick / 500
            if tick % 500 == 250 {
                for _ in 0..<30 { recorder.recordAgent(agentChunk, sampleRate: 24_000, itemID: "item_\(reply)") }
            }
            if tick % 500 == 325, reply.isMultiple(of: 2) { recorder.cutAgent(itemID: "item_\(reply)", afterMilliseconds: 1_500) }
        }
        // A pause between ticks lets the queue write each chunk on its own, as it does when
        // audio arrives in real time (fed all at once, writes would batch and cost less).
        try await Task.sleep(for: .milliseconds(1))
    }
    for recorder in recorders { recorder.finish() }
    for recorder in recorders { await recorder.finished() }
    let cpu = ProcessFigures.ownCPUSeconds() - cpuBefore

    let bytes = recorders.compactMap { (try? FileManager.default.attributesOfItem(atPath: $0.url.path))?[.size] as? Int }.reduce(0, +)
    let sessionSeconds = Double(calls * seconds)
    return [
        BenchmarkResult(
            area: "recordings", name: "CPU per recorded session-second (24 kHz stereo WAV, \(calls) calls x \(seconds) s fed in 20 ms chunks)",
            value: cpu * 1000 / sessionSeconds, unit: "ms", target: "", meetsTarget: nil
        ),
        BenchmarkResult(
            area: "recordings", name: "recording size per minute of call (24 kHz 16-bit stereo WAV)",
            value: Double(bytes) / 1_048_576 / (sessionSeconds / 60), unit: "MiB", target: "", meetsTarget: nil
        ),
    ]
}
