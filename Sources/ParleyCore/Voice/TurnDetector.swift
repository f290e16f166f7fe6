import Foundation

/// Decides when a person starts and stops speaking, from per-frame speech probabilities.
///
/// A value-type state machine, quiet → starting → speaking → stopping → quiet, with the
/// parameters of the OpenAI Realtime `server_vad` plus a minimum speech duration and a maximum
/// utterance length. Feed it every frame with the frame's audio time; it returns what
/// happened.
///
/// The silence that ends a turn is timed from where the voice stopped, to the sample: once a
/// turn is under way, audio far quieter than the turn's loudest speech counts as silence even
/// while the VAD still scores it as speech (a VAD's probability lingers for about 100 ms after
/// a voice stops, and its frames are 32 ms long). Audio short of a whole VAD frame can finish
/// the silence through `processPartialFrame(_:at:)`. Time is audio time in milliseconds since the start of the input stream, as
/// the realtime protocol's `audio_start_ms` / `audio_end_ms` use it.
///
/// ```swift
/// var turns = TurnDetector(sampleRate: 16_000)
/// for action in turns.process(probability: vad.speechProbability(of: frame), frame: frame, at: timeMs) {
///     switch action {
///     case .speechStarted(let startMs): send(.speechStarted(startMs))
///     case .speechStopped(let endMs): send(.speechStopped(endMs))
///     case .commit(let utterance): transcribe(utterance.samples)
///     case .idleTimeout(let startMs, let endMs): nudge(startMs, endMs)
///     }
/// }
/// ```
public struct TurnDetector: Sendable {
    /// Tuning; may be changed between frames and applies from the next frame.
    public struct Configuration: Sendable, Hashable, Codable {
        /// Probability at or above which a frame counts as speech (`threshold`).
        public var threshold: Float
        /// Audio kept from before speech began and included in the utterance (`prefix_padding_ms`).
        public var prefixPaddingMs: Int
        /// Silence that ends a turn (`silence_duration_ms`).
        public var silenceDurationMs: Int
        /// Silence after `armIdleTimeout(at:)` that raises `idleTimeout` (`idle_timeout_ms`); `nil` never.
        public var idleTimeoutMs: Int?
        /// Speech needed before a turn is announced; shorter sounds (clicks, coughs) are dropped.
        public var minimumSpeechMs: Int
        /// Silence that drops a start before it reached `minimumSpeechMs`; shorter gaps, like
        /// those between the syllables of a first word, keep counting towards it.
        public var maximumStartGapMs: Int
        /// Utterance length (prefix included) at which a commit is forced; `nil` never.
        public var maximumUtteranceMs: Int?
        /// How far (in dB) audio may fall below the turn's loudest speech before it counts as
        /// silence whatever the VAD says; `nil` leaves the decision to the VAD alone.
        public var quietBelowPeakDB: Float?
        /// Semantic turn detection: pauses are judged by a turn-completion model instead of
        /// ended by `silenceDurationMs`; `nil` ends turns on silence alone.
        public var completionCheck: CompletionCheck?

        /// Creates a configuration; the defaults are OpenAI's `server_vad` defaults.
        public init(
            threshold: Float = 0.5,
            prefixPaddingMs: Int = 300,
            silenceDurationMs: Int = 500,
            idleTimeoutMs: Int? = nil,
            minimumSpeechMs: Int = 100,
            maximumStartGapMs: Int = 250,
            maximumUtteranceMs: Int? = 30_000,
            quietBelowPeakDB: Float? = 40,
            completionCheck: CompletionCheck? = nil
        ) {
            self.completionCheck = completionCheck
            self.threshold = threshold
            self.prefixPaddingMs = prefixPaddingMs
            self.silenceDurationMs = silenceDurationMs
            self.idleTimeoutMs = idleTimeoutMs
            self.minimumSpeechMs = minimumSpeechMs
            self.maximumStartGapMs = maximumStartGapMs
            self.maximumUtteranceMs = maximumUtteranceMs
            self.quietBelowPeakDB = quietBelowPeakDB
        }
    }

    /// When a pause is judged and what the verdict does (`semantic_vad`).
    public struct CompletionCheck: Sendable, Hashable, Codable {
        /// Silence after which the turn so far is judged.
        public var afterSilenceMs: Int
        /// Completion probability at or above which the turn ends where it was judged.
        public var threshold: Float
        /// Silence that ends the turn whatever the verdict (or while it is awaited).
        public var maximumSilenceMs: Int
        /// Silence that ends the turn when the audio model found it incomplete but the pause's
        /// words say it is complete and the recognizer was sure of them
        /// (`wordsJudgedComplete(atMs:lastWordIsSure:)`): a second opinion shortens the wait
        /// without ending the turn at once.
        public var completeByWordsSilenceMs: Int

        /// Silence that ends the turn when the pause's words say it is complete but the
        /// recognizer doubted their last word (a dangling "if" heard as "him?"): half the
        /// maximum, longer than sure words wait.
        public var doubtfulWordsSilenceMs: Int { max(completeByWordsSilenceMs, maximumSilenceMs / 2) }

        /// Creates a check; `completeByWordsSilenceMs` defaults to half of `maximumSilenceMs`.
        public init(afterSilenceMs: Int, threshold: Float, maximumSilenceMs: Int, completeByWordsSilenceMs: Int? = nil) {
            self.afterSilenceMs = afterSilenceMs
            self.threshold = threshold
            self.maximumSilenceMs = maximumSilenceMs
            self.completeByWordsSilenceMs = min(completeByWordsSilenceMs ?? maximumSilenceMs / 2, maximumSilenceMs)
        }
    }

    /// Where the detector is in a turn.
    public enum State: Sendable, Hashable {
        /// No speech; recent audio is kept as prefix padding.
        case quiet
        /// Speech began but is not yet long enough to announce.
        case starting
        /// A turn is in progress and the last frame was speech.
        case speaking
        /// A turn is in progress and silence is running.
        case stopping
    }

    /// One finished utterance.
    public struct Utterance: Sendable, Hashable {
        /// Mono samples from `audioStartMs` to `audioEndMs`, prefix padding and closing silence included.
        public var samples: [Float]
        /// Audio time of the first sample.
        public var audioStartMs: Int
        /// Audio time just after the last sample.
        public var audioEndMs: Int
        /// Whether the commit was forced by `maximumUtteranceMs` while speech went on.
        public var reachedMaximumLength: Bool
    }

    /// What the caller should do after a frame.
    public enum Action: Sendable, Hashable {
        /// A turn began; `audioStartMs` includes the prefix padding.
        case speechStarted(audioStartMs: Int)
        /// The turn ended; `audioEndMs` includes the closing silence.
        case speechStopped(audioEndMs: Int)
        /// The turn's audio, always right after `speechStopped`.
        case commit(Utterance)
        /// Nobody spoke for `idleTimeoutMs` after the timer was armed.
        case idleTimeout(audioStartMs: Int, audioEndMs: Int)
        /// With a completion check: judge whether the turn in `samples` (through audio time
        /// `atMs`) is complete, and report with `completionJudged(probability:atMs:)`.
        case judgeCompletion(samples: [Float], atMs: Int)
    }

    /// The tuning in use.
    public var configuration: Configuration
    /// Sample rate of the frames.
    public let sampleRate: Int
    /// Where the detector is in a turn.
    public private(set) var state: State = .quiet

    /// Audio before the current turn (quiet) — the source of prefix padding.
    private var recent: [Float] = []
    /// The current turn's audio, prefix included (starting, speaking, stopping).
    private var utterance: [Float] = []
    /// Audio time of `utterance.first`.
    private var utteranceStartMs = 0
    /// Speech heard since the turn began, in milliseconds.
    private var voicedMs = 0
    /// Audio time at which the current run of silence began.
    private var silenceStartMs = 0
    /// Audio time at which the idle timer was armed.
    private var idleArmedAtMs: Int?
    /// RMS of the loudest 5 ms block of speech in the current turn.
    private var turnPeakLevel: Float = 0
    /// Audio time at which the current pause was sent to be judged; nil before that.
    private var judgedAtMs: Int?
    /// The silence that ends the current pause because its words said the thought is complete
    /// (`wordsJudgedComplete(atMs:lastWordIsSure:)`); nil when they did not.
    private var silenceAllowedByWordsMs: Int?

    /// Creates a detector for mono frames at `sampleRate`.
    public init(sampleRate: Int = 16_000, configuration: Configuration = Configuration()) {
        self.sampleRate = max(sampleRate, 1)
        self.configuration = configuration
    }

    /// Advances by one frame.
    /// - Parameters:
    ///   - probability: the VAD's speech probability for the frame.
    ///   - frame: the frame's mono samples at `sampleRate`.
    ///   - startMs: audio time of the frame's first sample.
    /// - Returns: what happened, in order; usually nothing.
    public mutating func process(probability: Float, frame: [Float], at startMs: Int) -> [Action] {
        let endMs = startMs + frame.count * 1000 / sampleRate
        let isSpeech = probability >= configuration.threshold
        var actions: [Action] = []
        switch state {
        case .quiet:
            if isSpeech {
                begin(frame, at: startMs, endMs: endMs, actions: &actions)
            } else {
                keepAsPrefix(frame)
                if let armedMs = idleArmedAtMs, let timeout = configuration.idleTimeoutMs, endMs - armedMs >= timeout {
                    idleArmedAtMs = nil
                    actions.append(.idleTimeout(audioStartMs: armedMs, audioEndMs: endMs))
                }
            }
        case .starting:
            utterance += frame
            if isSpeech {
                turnPeakLevel = max(turnPeakLevel, Self.blockLevels(of: frame, sampleRate: sampleRate).max() ?? 0)
                voicedMs += endMs - startMs
                silenceStartMs = endMs
                announceIfLongEnough(&actions)
            } else if endMs - silenceStartMs >= configuration.maximumStartGapMs {
                abandon()
            }
        case .speaking, .stopping:
            utterance += frame
            if let voiceEndMs = isSpeech ? voiceEnd(in: frame, at: startMs) : nil {
                state = voiceEndMs < endMs ? .stopping : .speaking
                silenceStartMs = voiceEndMs
                judgedAtMs = nil
                silenceAllowedByWordsMs = nil
            } else if state == .speaking {
                state = .stopping
                silenceStartMs = startMs
            }
            let silenceMs = endMs - silenceStartMs
            if state == .stopping, let check = configuration.completionCheck, judgedAtMs == nil, silenceMs >= check.afterSilenceMs {
                judgedAtMs = endMs
                actions.append(.judgeCompletion(samples: utterance, atMs: endMs))
            }
            if state == .stopping, silenceMs >= silenceEndingTheTurnMs {
                finish(endMs: endMs, reachedMaximumLength: false, actions: &actions)
                return actions
            }
            forceCommitIfTooLong(endMs: endMs, actions: &actions)
        }
        return actions
    }

    /// Ends the turn early when audio short of a whole VAD frame (starting at `startMs`, right
    /// after the last frame given to `process`) is all quiet and completes the silence. The
    /// samples are not kept: they arrive again in the next whole frame.
    /// - Parameter heardThroughMs: how far the input has arrived when a resampler still holds
    ///   back its last millisecond or so, which then counts as part of the quiet audio.
    /// - Returns: `speechStopped` and `commit` when the turn ended; otherwise nothing.
    public mutating func processPartialFrame(_ samples: [Float], at startMs: Int, heardThroughMs: Int? = nil) -> [Action] {
        let endMs = max(startMs + samples.count * 1000 / sampleRate, heardThroughMs ?? 0)
        guard state == .stopping, configuration.completionCheck == nil, endMs > startMs, endMs - silenceStartMs >= configuration.silenceDurationMs,
              configuration.quietBelowPeakDB != nil, voiceEnd(in: samples, at: startMs) == nil else { return [] }
        var actions: [Action] = []
        finish(endMs: endMs, reachedMaximumLength: false, actions: &actions)
        return actions
    }

    /// Takes the verdict on the pause judged at `atMs`: a complete turn (at or above the
    /// check's threshold) ends there, the audio after it dropped; an incomplete one waits on,
    /// up to the check's maximum silence. A verdict on a pause the person has since spoken
    /// after, or on an ended turn, changes nothing.
    /// - Returns: `speechStopped` and `commit` when the turn ended; otherwise nothing.
    public mutating func completionJudged(probability: Float, atMs: Int) -> [Action] {
        guard state == .stopping, judgedAtMs == atMs, let check = configuration.completionCheck,
              probability >= check.threshold else { return [] }
        utterance.removeLast(max(0, utterance.count - (atMs - utteranceStartMs) * sampleRate / 1000))
        var actions: [Action] = []
        finish(endMs: atMs, reachedMaximumLength: false, actions: &actions)
        return actions
    }

    /// Takes the pause's words' verdict on the pause judged at `atMs` when they say the thought
    /// is complete but the turn did not end there: the turn ends once the silence reaches the
    /// check's `completeByWordsSilenceMs` (or, when the recognizer doubted the last word,
    /// `doubtfulWordsSilenceMs`) instead of its maximum. Speech before then carries the turn on
    /// as usual; a verdict on a pause already spoken after, or on an ended turn, changes nothing.
    public mutating func wordsJudgedComplete(atMs: Int, lastWordIsSure: Bool = true) {
        guard state == .stopping, judgedAtMs == atMs, let check = configuration.completionCheck else { return }
        silenceAllowedByWordsMs = lastWordIsSure ? check.completeByWordsSilenceMs : check.doubtfulWordsSilenceMs
    }

    /// The silence that ends the current turn: `silenceDurationMs` on silence alone; with a
    /// completion check, its maximum, or less once the pause's words said it is complete.
    private var silenceEndingTheTurnMs: Int {
        guard let check = configuration.completionCheck else { return configuration.silenceDurationMs }
        return silenceAllowedByWordsMs ?? check.maximumSilenceMs
    }

    /// Where the silence now running in a turn began (after the last voice); nil unless stopping.
    public var silenceStartedAtMs: Int? { state == .stopping ? silenceStartMs : nil }

    /// The audio of the turn in progress, prefix padding included; empty when quiet.
    /// A recognizer re-decodes it for live partial transcripts.
    public var utteranceInProgress: [Float] { state == .quiet ? [] : utterance }

    /// Starts the idle timer at audio time `ms` (call when the agent's reply finished playing).
    public mutating func armIdleTimeout(at ms: Int) { idleArmedAtMs = ms }

    /// Stops the idle timer.
    public mutating func disarmIdleTimeout() { idleArmedAtMs = nil }

    /// Drops any turn in progress and all buffered audio (`input_audio_buffer.clear`).
    public mutating func reset() {
        state = .quiet
        recent.removeAll()
        utterance.removeAll()
        voicedMs = 0
        idleArmedAtMs = nil
        turnPeakLevel = 0
        judgedAtMs = nil
        silenceAllowedByWordsMs = nil
    }

    /// Drops the turn in progress like `reset()` but keeps the idle timer running: for speech
    /// that turned out to mean nothing (a backchannel over the agent).
    public mutating func dropTurn() {
        let armedMs = idleArmedAtMs
        reset()
        idleArmedAtMs = armedMs
    }

    /// Samples of prefix padding to keep.
    private var prefixCapacity: Int { max(configuration.prefixPaddingMs, 0) * sampleRate / 1000 }

    /// Adds quiet audio to the prefix, keeping only the newest `prefixCapacity` samples
    /// (trimmed in batches so the cost per frame stays constant).
    private mutating func keepAsPrefix(_ frame: [Float]) {
        recent += frame
        if recent.count > 2 * prefixCapacity + frame.count {
            recent.removeFirst(recent.count - prefixCapacity)
        }
    }

    /// Enters `starting` with the prefix and the first speech frame.
    private mutating func begin(_ frame: [Float], at startMs: Int, endMs: Int, actions: inout [Action]) {
        let prefixCount = min(recent.count, prefixCapacity)
        utterance = Array(recent.suffix(prefixCount)) + frame
        recent.removeAll()
        utteranceStartMs = startMs - prefixCount * 1000 / sampleRate
        voicedMs = endMs - startMs
        silenceStartMs = endMs
        turnPeakLevel = Self.blockLevels(of: frame, sampleRate: sampleRate).max() ?? 0
        state = .starting
        announceIfLongEnough(&actions)
    }

    /// Moves from `starting` to `speaking` once enough speech was heard.
    private mutating func announceIfLongEnough(_ actions: inout [Action]) {
        guard voicedMs >= configuration.minimumSpeechMs else { return }
        state = .speaking
        idleArmedAtMs = nil
        actions.append(.speechStarted(audioStartMs: utteranceStartMs))
    }

    /// Drops a start that was too short to be speech; its audio becomes prefix again.
    private mutating func abandon() {
        state = .quiet
        recent = utterance
        utterance.removeAll()
        keepAsPrefix([])
    }

    /// Audio time just after the voice in `samples`: the last 5 ms block loud enough to be voice
    /// (within `quietBelowPeakDB` of the turn's peak, which a louder block raises), up to its
    /// last sample above that level; nil when no block is.
    /// Without the level check, or while the turn has been digital silence, the whole of
    /// `samples` is voice.
    private mutating func voiceEnd(in samples: [Float], at startMs: Int) -> Int? {
        let endMs = startMs + samples.count * 1000 / sampleRate
        guard let quietBelowPeakDB = configuration.quietBelowPeakDB else { return endMs }
        let levels = Self.blockLevels(of: samples, sampleRate: sampleRate)
        turnPeakLevel = max(turnPeakLevel, levels.max() ?? 0)
        guard turnPeakLevel > 0 else { return endMs }
        let voiceLevel = turnPeakLevel * pow(10, -quietBelowPeakDB / 20)
        guard let lastVoiced = levels.lastIndex(where: { $0 > voiceLevel }) else { return nil }
        // Within the last loud block, the voice ends after its last sample above the level.
        let blockLength = Self.blockLength(sampleRate: sampleRate)
        let blockStart = lastVoiced * blockLength
        let blockEnd = min(blockStart + blockLength, samples.count)
        let lastSample = samples[blockStart..<blockEnd].lastIndex { abs($0) > voiceLevel } ?? blockEnd - 1
        return min(endMs, startMs + ((lastSample + 1) * 1000 + sampleRate - 1) / sampleRate)
    }

    /// Samples in one 5 ms block.
    private static func blockLength(sampleRate: Int) -> Int { max(sampleRate / 200, 1) }

    /// The RMS of each 5 ms block of `samples` (the last one may be shorter).
    private static func blockLevels(of samples: [Float], sampleRate: Int) -> [Float] {
        let blockLength = blockLength(sampleRate: sampleRate)
        return stride(from: 0, to: samples.count, by: blockLength).map { start in
            LevelMeter.rms(samples[start..<min(start + blockLength, samples.count)])
        }
    }

    /// Forces a commit when the utterance reached `maximumUtteranceMs`.
    private mutating func forceCommitIfTooLong(endMs: Int, actions: inout [Action]) {
        guard let maximum = configuration.maximumUtteranceMs, endMs - utteranceStartMs >= maximum else { return }
        finish(endMs: endMs, reachedMaximumLength: true, actions: &actions)
    }

    /// Ends the turn: announces the stop and hands over the utterance.
    private mutating func finish(endMs: Int, reachedMaximumLength: Bool, actions: inout [Action]) {
        actions.append(.speechStopped(audioEndMs: endMs))
        actions.append(.commit(Utterance(
            samples: utterance,
            audioStartMs: utteranceStartMs,
            audioEndMs: endMs,
            reachedMaximumLength: reachedMaximumLength
        )))
        utterance = []
        state = .quiet
        judgedAtMs = nil
        silenceAllowedByWordsMs = nil
    }
}
