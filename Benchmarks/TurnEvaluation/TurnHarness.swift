import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyServer

/// What one clip did to a session's turn detection, in audio time from the session's start.
public struct TurnEndOutcome: Sendable {
    public var clip: TurnClip
    /// Where the clip's first sample was played.
    public var clipStartMs: Int
    /// `audio_end_ms` of each `input_audio_buffer.speech_stopped`.
    public var turnEndsMs: [Int]
    /// Wall time from sending the chunk with the clip's last voiced sample to receiving the
    /// first `speech_stopped`, in milliseconds (the model's and the network's time included).
    public var lastVoicedSentToStoppedReceivedMs: Double?
    /// `parley.turn_judged` verdicts: probability, whether each ended the turn and the
    /// pause's transcript it read (if any).
    public var verdicts: [(probability: Double, endsTurn: Bool, transcript: String?)]
    /// The first final transcript.
    public var transcript: String?

    /// Where the thought ended (the last voiced sample), in session audio time.
    public var thoughtEndMs: Double { Double(clipStartMs) + TurnClip.milliseconds(clip.thoughtEndSample) }

    /// The first turn end, less the end of the thought: audio time from the last voiced sample
    /// to the turn's end; `nil` when the turn never ended.
    public var lastVoicedToTurnEndMs: Double? { turnEndsMs.first.map { Double($0) - thoughtEndMs } }

    /// For a mid-thought clip: whether the turn ended before the thought went on (inside the pause).
    public var cutOffMidThought: Bool {
        guard let pause = clip.midThoughtPause, let end = turnEndsMs.first else { return false }
        return Double(end) < Double(clipStartMs) + TurnClip.milliseconds(pause.upperBound)
    }
}

/// What a clip played over the agent's reply did.
public struct OverAgentOutcome: Sendable {
    public var clip: TurnClip
    /// Where the clip's first sound was played, in session audio time.
    public var onsetMs: Int
    /// Whether the reply was interrupted (a `parley.interruption` that interrupts, or the
    /// response cancelled).
    public var interrupted: Bool
    /// `parley.output_audio.paused` `audio_ms` less the onset, when the agent was paused.
    public var onsetToPausedMs: Int?
    /// The interrupting `parley.interruption`'s `audio_ms` less the onset: when output stopped for good.
    public var onsetToStoppedMs: Int?
    /// Whether a pause was followed by `parley.output_audio.resumed`.
    public var resumed: Bool
    /// Each `parley.interruption`'s reason and the words it judged.
    public var verdicts: [String]
    /// Whether the session cancelled its own output from its input (`parley_echo_cancellation`).
    public var echoCancellation: Bool
}

/// Drives real realtime sessions with corpus clips and reports what each one did. Every
/// clip gets a session of its own, its audio paced in real time after `leadMs` of silence.
public struct TurnHarness: Sendable {
    /// Silence before each clip.
    public static let leadMs = 500
    public let server: TurnEvaluationServer

    public init(server: TurnEvaluationServer) { self.server = server }

    /// Plays `clip` with `setting` (no responses: only the listening is measured) and waits
    /// until the turn ends or the setting's longest silence (plus 1.5 s) has passed.
    public func playForTurnEnd(_ clip: TurnClip, setting: TurnDetectionSetting) async throws -> TurnEndOutcome {
        let session = try await server.openSession(
            #"{"type":"realtime","audio":{"input":{"turn_detection":\#(setting.json(createResponse: false))}}}"#
        )
        defer { session.close() }
        try await session.sendSilence(milliseconds: Self.leadMs)
        let clipStartMs = session.sentMs
        let firstChunk = session.chunksSent
        try await session.send(Self.realtimeRate(clip.samples))
        _ = try await session.sendSilence(untilMs: setting.maximumSilenceMs + 1_500) {
            session.log.first("input_audio_buffer.speech_stopped") != nil
        }
        if session.log.first("input_audio_buffer.speech_stopped") != nil {
            _ = await session.log.wait(for: .seconds(20), type: "conversation.item.input_audio_transcription.completed")
        }
        let lastVoicedChunk = firstChunk + EndOfSpeech.chunk(holding: clip.thoughtEndSample - 1, sampleRate: TurnClip.sampleRate)
        let wallDelay = session.log.firstArrival("input_audio_buffer.speech_stopped").flatMap { received in
            lastVoicedChunk < session.sentAt.count ? (received - session.sentAt[lastVoicedChunk]).turnMilliseconds : nil
        }
        return TurnEndOutcome(
            clip: clip, clipStartMs: clipStartMs,
            turnEndsMs: session.log.all("input_audio_buffer.speech_stopped").compactMap { $0["audio_end_ms"]?.numberValue.map { Int($0) } },
            lastVoicedSentToStoppedReceivedMs: wallDelay,
            verdicts: session.log.all("parley.turn_judged").compactMap { event in
                guard let probability = event["probability"]?.numberValue, let ends = event["ends_turn"]?.boolValue else { return nil }
                return (probability, ends, event["transcript"]?.stringValue)
            },
            transcript: session.log.first("conversation.item.input_audio_transcription.completed")?["transcript"]?.stringValue
        )
    }

    /// Starts a reply (`response.create`, the agent's scripted long answer spoken by flite),
    /// plays `clip` 500 ms after its first audio arrived, and waits for the verdict (up to
    /// 3 s of silence after the clip). An echo-leak clip plays nothing itself: the agent's own
    /// audio comes back at the recipe's level for as long; `echoCancellation` asks the session
    /// to cancel it (`parley_echo_cancellation`).
    public func playOverAgent(
        _ clip: TurnClip, setting: TurnDetectionSetting = .serverVAD(silenceMs: 300), echoCancellation: Bool = false
    ) async throws -> OverAgentOutcome {
        let session = try await server.openSession(
            #"{"type":"realtime","parley_echo_cancellation":\#(echoCancellation),"audio":{"input":{"turn_detection":\#(setting.json(createResponse: true))}}}"#
        )
        defer { session.close() }
        try await session.sendSilence(milliseconds: 300)
        try session.sendEvent(#"{"type":"response.create"}"#)
        guard try await session.sendSilence(untilMs: 20_000, { session.log.first("response.output_audio.delta") != nil }) else {
            throw TurnHarnessFailure("the agent did not start speaking within 20 s")
        }
        if let gain = clip.recipe.echoGainDB { session.leakAgentAudio(gainDB: gain) }
        try await session.sendSilence(milliseconds: 500)
        let onsetMs = session.sentMs + Int(TurnClip.milliseconds(clip.onsetSample))
        try await session.send(Self.realtimeRate(clip.samples))
        // The verdict on speech over the agent waits for its words (Whisper on the clip), which
        // takes longer on a busy machine: up to 10 s once the agent was paused.
        // (The reply's response.done comes as soon as its audio was sent, long before it has
        // played: only a cancelled one says anything about the clip.)
        func decided() -> Bool {
            session.log.first("parley.interruption") != nil
                || session.log.all("response.done").contains { $0["response"]?["status"]?.stringValue == "cancelled" }
        }
        _ = try await session.sendSilence(untilMs: 3_000, decided)
        if session.log.first("parley.output_audio.paused") != nil {
            _ = try await session.sendSilence(untilMs: 10_000, decided)
        }
        // A little more, to see a paused reply resume.
        try await session.sendSilence(milliseconds: 600)
        let decision = session.log.all("parley.interruption").first { $0["interrupts"]?.boolValue == true }
        let cancelled = session.log.all("response.done").contains { $0["response"]?["status"]?.stringValue == "cancelled" }
        let paused = session.log.first("parley.output_audio.paused")?["audio_ms"]?.numberValue.map { Int($0) }
        return OverAgentOutcome(
            clip: clip, onsetMs: onsetMs, interrupted: decision != nil || cancelled,
            onsetToPausedMs: paused.map { $0 - onsetMs },
            onsetToStoppedMs: decision?["audio_ms"]?.numberValue.map { Int($0) - onsetMs },
            resumed: session.log.first("parley.output_audio.resumed") != nil,
            verdicts: session.log.all("parley.interruption").map { event in
                "\(event["reason"]?.stringValue ?? "?")\(event["words"]?.stringValue.map { " \"\($0)\"" } ?? "")"
            },
            echoCancellation: echoCancellation
        )
    }

    /// The final transcript of `clip` committed by hand (`turn_detection` null), with
    /// `noise_reduction` as given (`nil`: off). The clip goes with 300 ms of silence before and
    /// after, as a turn the VAD ends carries its prefix padding and closing silence.
    public func transcribe(_ clip: TurnClip, noiseReduction: NoiseReduction?) async throws -> String {
        let reduction = noiseReduction.map { #"{"type":"\#($0.rawValue)"}"# } ?? "null"
        let session = try await server.openSession(
            #"{"type":"realtime","audio":{"input":{"turn_detection":null,"noise_reduction":\#(reduction)}}}"#
        )
        defer { session.close() }
        let silence = [Float](repeating: 0, count: 300 * TurnClip.sampleRate / 1000)
        try session.append(Self.realtimeRate(silence + clip.samples + silence))
        try session.sendEvent(#"{"type":"input_audio_buffer.commit"}"#)
        let done = await session.log.wait(for: .seconds(60)) {
            ["conversation.item.input_audio_transcription.completed", "conversation.item.input_audio_transcription.failed", "error"]
                .contains($0["type"]?.stringValue)
        }
        guard let transcript = done?["transcript"]?.stringValue else {
            throw TurnHarnessFailure("\(clip.recipe.id): no transcript (\(done?.jsonText ?? "nothing within 60 s"))")
        }
        return transcript
    }

    /// `samples` (16 kHz) at the realtime protocol's 24 kHz, by libsoxr.
    static func realtimeRate(_ samples: [Float]) -> [Float] {
        var resampler = ProviderFactory.resampler(from: TurnClip.sampleRate, to: RealtimeTurnSession.sampleRate)
        return resampler.process(samples) + resampler.flush()
    }
}

/// Runs `body` over `items` with at most `width` at a time; results in the items' order.
public func concurrentMap<Item: Sendable, Result: Sendable>(
    _ items: [Item], width: Int, _ body: @escaping @Sendable (Item) async throws -> Result
) async throws -> [Result] {
    try await withThrowingTaskGroup(of: (Int, Result).self) { group in
        var results = [Result?](repeating: nil, count: items.count)
        var next = 0
        for _ in 0..<min(width, items.count) {
            let index = next
            group.addTask { (index, try await body(items[index])) }
            next += 1
        }
        while let (index, result) = try await group.next() {
            results[index] = result
            if next < items.count {
                let index = next
                group.addTask { (index, try await body(items[index])) }
                next += 1
            }
        }
        return results.map { $0! }
    }
}

extension Duration {
    /// The duration in milliseconds.
    var turnMilliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
