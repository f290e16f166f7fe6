import Foundation
import ParleyCore

/// The realtime protocol codec: the audio delta hot path (about 25 events a second per
/// speaking session) against `JSONEncoder`, and decoding the busiest client events.
func runRealtimeBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let iterations = quick ? 5_000 : 50_000
    // 40 ms of 24 kHz speech per delta: 25 deltas a second.
    let chunk = PCM16Buffer(samples: (0..<960).map { Int16(truncatingIfNeeded: $0 &* 37) })
    let base64 = chunk.base64EncodedString()
    let position = RealtimeContentPosition(responseID: RealtimeID.response(), itemID: RealtimeID.item())
    var results: [BenchmarkResult] = []
    var bytes = 0

    let encodeSeconds = medianSecondsPerCall(iterations: iterations) {
        bytes &+= RealtimeServerEvent.responseOutputAudioDelta(position, delta: base64).encode(dialect: .ga)?.utf8.count ?? 0
    }
    results.append(realtimeResult("audio delta encode, 40 ms chunk", encodeSeconds * 1e6, "us/event", "<= 10 us", encodeSeconds <= 10e-6))
    // 300 speaking sessions at 25 deltas a second: arithmetic from the figure above, not a
    // measurement of 300 sessions, so it carries no target (the server area measures those).
    let coreShare = encodeSeconds * 300 * 25 * 100
    results.append(realtimeResult("audio delta encode, 300 speaking sessions (projected: per-event cost x 7,500 events/s)", coreShare, "% of a core", "", nil))

    let fromSamplesSeconds = medianSecondsPerCall(iterations: iterations) {
        let delta = chunk.base64EncodedString()
        bytes &+= RealtimeServerEvent.responseOutputAudioDelta(position, delta: delta).encode(dialect: .ga)?.utf8.count ?? 0
    }
    results.append(realtimeResult("audio delta from samples (base64 + encode)", fromSamplesSeconds * 1e6, "us/event", "", nil))

    let encoder = JSONEncoder()
    let reference = AudioDeltaReference(
        type: "response.output_audio.delta", event_id: RealtimeID.event(), response_id: position.responseID,
        item_id: position.itemID, output_index: 0, content_index: 0, delta: base64
    )
    let jsonEncoderSeconds = try medianSecondsPerCall(iterations: iterations) {
        var event = reference
        event.event_id = RealtimeID.event()
        bytes &+= try encoder.encode(event).count
    }
    results.append(realtimeResult("audio delta via JSONEncoder (reference)", jsonEncoderSeconds * 1e6, "us/event", "", nil))
    let speedup = jsonEncoderSeconds / encodeSeconds
    results.append(realtimeResult("audio delta encode speedup over JSONEncoder", speedup, "x", ">= 2x", speedup >= 2))

    let append = RealtimeClientEvent.inputAudioBufferAppend(audio: base64, eventID: "evt_1").encode(dialect: .ga)
    let appendSeconds = try medianSecondsPerCall(iterations: iterations) {
        if case .inputAudioBufferAppend(let audio, _) = try RealtimeClientEvent.decode(append, dialect: .ga) {
            bytes &+= audio.utf8.count
        }
    }
    results.append(realtimeResult("append decode, 40 ms chunk", appendSeconds * 1e6, "us/event", "<= 20 us", appendSeconds <= 20e-6))

    let sessionUpdate = RealtimeClientEvent.sessionUpdate(RealtimeSessionSettings(
        instructions: String(repeating: "Be helpful and brief. ", count: 20), voice: "alloy", outputModalities: [.audio],
        inputAudioFormat: .pcm16, outputAudioFormat: .pcm16, turnDetection: .serverVAD(ServerVADSettings()),
        inputTranscription: .enabled(model: "whisper-1", language: "en", prompt: nil),
        tools: (0..<5).map { ToolDefinition(name: "tool_\($0)", description: "A tool.", parameters: .object(["type": .string("object")])) },
        toolChoice: .auto
    )).encode(dialect: .ga)
    let sessionSeconds = try medianSecondsPerCall(iterations: iterations / 10) {
        if case .sessionUpdate(let settings, _) = try RealtimeClientEvent.decode(sessionUpdate, dialect: .ga) {
            bytes &+= settings.tools?.count ?? 0
        }
    }
    results.append(realtimeResult("session.update decode (5 tools)", sessionSeconds * 1e6, "us/event", "", nil))
    precondition(bytes > 0, "benchmark produced nothing")
    return results
}

/// The audio delta as a `Codable` value, to compare against `JSONEncoder`.
private struct AudioDeltaReference: Encodable {
    var type: String
    var event_id: String
    var response_id: String
    var item_id: String
    var output_index: Int
    var content_index: Int
    var delta: String
}

private func realtimeResult(_ name: String, _ value: Double, _ unit: String, _ target: String, _ meets: Bool?) -> BenchmarkResult {
    BenchmarkResult(area: "realtime", name: name, value: value, unit: unit, target: target, meetsTarget: meets)
}
