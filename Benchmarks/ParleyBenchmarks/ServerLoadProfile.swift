import Foundation
import ParleyCore
import ParleyLocal

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
    /// The capacity search's first counts (`CapacitySearch.ladder`).
    var sessionCounts: [Int]
    /// The most sessions the capacity search tries.
    var ceiling: Int
    /// The sessions the profile must hold, when it has a target.
    var capacityTarget: Int?

    /// The upstream's delays in the defaults profile: those of the Pipecat comparison.
    static let realisticUpstream = [
        "--transcription-ms", "50", "--first-token-ms", "100", "--tokens-per-second", "100",
        "--speech-first-byte-ms", "50", "--speech-audio-ms", "500",
    ]

    /// The defaults a user gets: Silero VAD, server_vad with a 300 ms silence window,
    /// preemptive transcription and generation on, a question spoken by flite, and an upstream
    /// with realistic delays.
    static func defaults(quick: Bool) async throws -> ServerLoadProfile {
        ServerLoadProfile(
            name: "defaults (Silero VAD, 300 ms silence, preemption on, realistic upstream)",
            latencyName: "last voiced chunk sent -> first audio delta received",
            measuredFrom: .lastVoicedChunk,
            serverArguments: ["--vad", "silero"],
            upstreamArguments: ["--reply", InstantProviders.reply] + realisticUpstream,
            audio: try await spokenTurn(),
            p99LimitMs: 1_000,
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
            sessionCounts: quick ? [100, 300] : [100, 200, 300, 400, 500],
            ceiling: quick ? 600 : 2_000,
            capacityTarget: nil
        )
    }

    /// One turn of a question spoken by flite (resampled to 24 kHz), with time after it for
    /// the silence window and the two-sentence spoken reply.
    private static func spokenTurn() async throws -> TurnAudio {
        let flite = try FliteSpeechSynthesizer()
        var speech: [Int16] = []
        for try await chunk in flite.synthesize("What is the weather like in Paris today?", options: SpeechOptions()) { speech += chunk }
        var resampler = BenchmarkServer.resampler(from: flite.sampleRate, to: TurnAudio.sampleRate)
        let resampled = resampler.process(SampleConversion.float(speech)) + resampler.flush()
        return TurnAudio(speech: SampleConversion.pcm16(resampled), leadMs: 300, tailMs: 2_800)
    }
}
