import Foundation
import ParleyCore

/// What the server under load runs with and how its latency is timed.
struct ServerLoadProfile: Sendable {
    /// Where a turn's latency is timed from.
    enum Start: Sendable {
        /// The chunk whose arrival let the server's input reach `speech_stopped.audio_end_ms`.
        case turnEnd
        /// The chunk holding the last voiced sample of the question (`EndOfSpeech`).
        case lastVoicedChunk
    }

    /// How figure names say the profile.
    var name: String
    /// What the latency figures time, from which event to which.
    var latencyName: String
    var measuredFrom: Start
    /// Options of `ParleyBenchmarks serve` besides `--upstream`.
    var serverArguments: [String]
    var upstreamArguments: [String]
    var audio: TurnAudio
    var p99LimitMs: Double
    /// The p99 limit for figure names, with where it comes from.
    var p99LimitText: String
    /// The capacity search's first counts (`CapacitySearch.ladder`).
    var sessionCounts: [Int]
    /// The most sessions the capacity search tries.
    var ceiling: Int
    /// The sessions the profile must hold, when it has a target.
    var capacityTarget: Int?

    /// The defaults a user gets: Silero VAD, server_vad with a 300 ms silence window,
    /// preemptive transcription and generation on, a question spoken by flite, and an upstream
    /// as slow as a hosted stack (`RealisticUpstream.hostedGPT41Mini`), held to
    /// `DefaultsLatencyBound`.
    static func defaults(quick: Bool) async throws -> ServerLoadProfile {
        let upstream = RealisticUpstream.hostedGPT41Mini
        let bound = DefaultsLatencyBound.defaults
        return ServerLoadProfile(
            name: "defaults (Silero VAD, 300 ms silence, preemption on, \(upstream.name))",
            latencyName: "last voiced chunk sent -> first audio delta received",
            measuredFrom: .lastVoicedChunk,
            serverArguments: ["--vad", "silero"],
            upstreamArguments: upstream.arguments,
            audio: try await spokenTurn(answerMs: bound.milliseconds + upstream.replyAudioMs),
            p99LimitMs: Double(bound.milliseconds),
            p99LimitText: bound.text,
            sessionCounts: quick ? [50, 150] : [100, 200, 300, 400],
            ceiling: quick ? 300 : 1_600,
            capacityTarget: 300
        )
    }

    /// What the server itself adds: energy VAD, synthetic speech, an upstream that answers at
    /// once (so the reply is ready inside the silence window and only released at the turn's end).
    static func pipelineOverhead(quick: Bool) -> ServerLoadProfile {
        ServerLoadProfile(
            name: "pipeline overhead (energy VAD, preemption on, instant upstream)",
            latencyName: "turn end (chunk reaching speech_stopped.audio_end_ms) sent -> first audio delta received",
            measuredFrom: .turnEnd,
            serverArguments: ["--vad", "energy"],
            upstreamArguments: ["--reply", InstantProviders.reply, "--speech-audio-ms", "200"],
            audio: TurnAudio(),
            p99LimitMs: 20,
            p99LimitText: "p99 ≤ 20 ms",
            sessionCounts: quick ? [100, 300] : [100, 200, 300, 400, 500],
            ceiling: quick ? 600 : 2_000,
            capacityTarget: nil
        )
    }

    /// One turn of the question spoken by flite (`DefaultsQuestion`, resampled to 24 kHz), with
    /// `answerMs` and a second more after it, so the reply is heard to its end before the next
    /// question (which would otherwise interrupt it).
    private static func spokenTurn(answerMs: Int) async throws -> TurnAudio {
        let (speech, rate) = try await DefaultsQuestion.spoken()
        var resampler = BenchmarkServer.resampler(from: rate, to: TurnAudio.sampleRate)
        let resampled = resampler.process(speech) + resampler.flush()
        return TurnAudio(speech: SampleConversion.pcm16(resampled), leadMs: 300, tailMs: answerMs + 1_000)
    }
}
