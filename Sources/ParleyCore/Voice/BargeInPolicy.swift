import Foundation

/// Decides whether a person speaking while the agent responds should interrupt it.
///
/// A value-type state machine fed once per VAD frame. Speech interrupts once it has lasted
/// `minimumSpeechMs` (short gaps up to `gapToleranceMs` do not break it). While the agent's
/// audio is playing, the speech threshold is raised (`playbackThreshold`) so the agent's own
/// voice leaking from speaker to microphone does not interrupt it. After an interruption,
/// nothing interrupts again for `cooldownMs`.
///
/// ```swift
/// var bargeIn = BargeInPolicy()
/// if bargeIn.process(probability: p, agent: player.isPlaying ? .speaking : .thinking, at: frameEndMs) == .interrupt {
///     cancelResponse()
/// }
/// ```
public struct BargeInPolicy: Sendable {
    /// Tuning; may be changed between frames.
    public struct Configuration: Sendable, Hashable, Codable {
        /// Speech probability that counts while the agent is working but not playing audio.
        public var threshold: Float
        /// Speech probability that counts while the agent's audio is playing (echo guard).
        public var playbackThreshold: Float
        /// How long speech must last before it interrupts.
        public var minimumSpeechMs: Int
        /// Gaps in speech up to this long do not restart the count.
        public var gapToleranceMs: Int
        /// After an interruption, how long nothing interrupts again.
        public var cooldownMs: Int

        /// Creates a configuration.
        public init(
            threshold: Float = 0.5,
            playbackThreshold: Float = 0.8,
            minimumSpeechMs: Int = 250,
            gapToleranceMs: Int = 100,
            cooldownMs: Int = 1_000
        ) {
            self.threshold = threshold
            self.playbackThreshold = playbackThreshold
            self.minimumSpeechMs = minimumSpeechMs
            self.gapToleranceMs = gapToleranceMs
            self.cooldownMs = cooldownMs
        }
    }

    /// What the agent is doing while the frame was heard.
    public enum AgentActivity: Sendable, Hashable {
        /// Nothing to interrupt.
        case idle
        /// A response is being prepared (LLM, TTS) but no audio is playing yet.
        case thinking
        /// The agent's audio is playing.
        case speaking
    }

    /// The decision for one frame.
    public enum Action: Sendable, Hashable {
        /// Cancel the agent's response now.
        case interrupt
        /// Let the agent carry on.
        case ignore
    }

    /// The tuning in use.
    public var configuration: Configuration

    /// Audio time at which the current run of speech began.
    private var speechStartMs: Int?
    /// Audio time of the end of the last speech frame.
    private var lastSpeechMs: Int?
    /// Audio time of the end of the previous frame.
    private var previousFrameEndMs: Int?
    /// Until when interruptions are suppressed.
    private var cooldownUntilMs: Int?

    /// Creates a policy.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Decides for one frame.
    /// - Parameters:
    ///   - probability: the VAD's speech probability for the frame.
    ///   - agent: what the agent is doing.
    ///   - endMs: audio time of the end of the frame.
    public mutating func process(probability: Float, agent: AgentActivity, at endMs: Int) -> Action {
        let frameStartMs = previousFrameEndMs ?? endMs
        previousFrameEndMs = endMs
        let inCooldown = cooldownUntilMs.map { endMs < $0 } ?? false
        guard agent != .idle, !inCooldown else {
            speechStartMs = nil
            return .ignore
        }
        let threshold = agent == .speaking ? configuration.playbackThreshold : configuration.threshold
        guard probability >= threshold else {
            if let lastSpeechMs, endMs - lastSpeechMs > configuration.gapToleranceMs { speechStartMs = nil }
            return .ignore
        }
        let startMs = speechStartMs ?? frameStartMs
        speechStartMs = startMs
        lastSpeechMs = endMs
        guard endMs - startMs >= configuration.minimumSpeechMs else { return .ignore }
        speechStartMs = nil
        cooldownUntilMs = endMs + configuration.cooldownMs
        return .interrupt
    }

    /// Forgets any speech in progress and any cool-down.
    public mutating func reset() {
        speechStartMs = nil
        lastSpeechMs = nil
        previousFrameEndMs = nil
        cooldownUntilMs = nil
    }
}
