import Foundation

/// Decides whether a person making sound while the agent responds means to interrupt it.
///
/// A value-type state machine fed once per VAD frame while the agent is thinking or speaking.
/// Sound shorter than `minimumSpeechMs` (a click, a cough, a door) is ignored. Speech that
/// reaches it, once some of it is voiced, makes the policy suspicious: the agent pauses
/// (`.pause`). Sound with less than
/// `minimumVoicedMs` of voicing (`Voicing`: a cough, a knock, a hiss — no pitch) is not
/// speech, however long and whatever a recognizer would make of it: the agent resumes.
/// Voiced speech that goes on to `maximumBackchannelMs` is an interruption as soon as its words
/// so far are known (`.judge`), unless they are only backchannels: a slow "mm-hmm" may go on
/// to twice that length. Speech that ends before is judged by its words (`.judge`, answered with
/// `judged(words:clearestWordConfidence:speechStartMs:speechEndMs:)`): nothing but
/// backchannels ("mm-hmm", "yeah", "okay", "right"), words that ask for nothing (`emptyWords`:
/// "you", "is it"), words the recognizer was sure of none of (`minimumWordConfidence`) or no
/// words at all resumes the agent (`.resume`); anything else ("wait", "stop", "no, I meant…")
/// interrupts it. While the agent's audio plays, speech must reach a raised threshold to start
/// (`playbackThreshold`) so its own voice leaking back from a speaker counts less; once started
/// it goes on above the plain one.
///
/// ```swift
/// var policy = InterruptionPolicy()
/// switch policy.process(probability: p, voiced: Voicing.isVoiced(frame, sampleRate: 16_000), agent: .speaking, at: frameEndMs) {
/// case .pause: pauseOutput()
/// case .judge(let startMs, let endMs): transcribe(startMs, endMs)
/// case .interrupt: cancelResponse()
/// case .resume, .none: break
/// }
/// ```
public struct InterruptionPolicy: Sendable {
    /// Tuning, per agent and per session (Parley's `parley_interruption` extension).
    public struct Configuration: Sendable, Hashable, Codable {
        /// Speech probability that counts while the agent is working but not playing audio.
        public var threshold: Float
        /// Speech probability from which speech starts while the agent's audio is playing (echo
        /// guard); once started, it goes on while above `threshold`.
        public var playbackThreshold: Float
        /// Speech shorter than this never stops the agent.
        public var minimumSpeechMs: Int
        /// Speech this long interrupts once its words so far are known, unless they are only
        /// backchannels; then it interrupts at twice this length.
        public var maximumBackchannelMs: Int
        /// Sound with less voicing than this is noise (a cough, a knock), never an interruption.
        public var minimumVoicedMs: Int
        /// Gaps in speech up to this long do not end it.
        public var gapToleranceMs: Int
        /// Words and phrases that only acknowledge: speech made of nothing else lets the agent
        /// go on. Compared without case or punctuation.
        public var backchannels: [String]
        /// Speech whose every word the recognizer was less sure of than this lets the agent go
        /// on: what it made of a sound it could not place ("sure" heard as "share", the agent's
        /// voice leaking back). 0 turns the rule off; a recognizer that does not say how sure
        /// it was is always sure enough. Measured with Whisper tiny.en over the short replies
        /// of the turn corpus: the requests' surest words scored 0.72–1.0 ("Stop" the least,
        /// the rest 0.89 or more), misheard acknowledgements 0.37–0.55.
        public var minimumWordConfidence: Float

        /// The backchannels recognised by default.
        public static let defaultBackchannels = [
            // A hum, however the recognizer spells it ("Mm-hm-m", "M-hm").
            "m", "mh", "mm", "mmm", "hm", "hmm", "mhm", "mhmm", "mmhmm", "mm hmm", "mm hm", "uh huh", "uhhuh", "uh", "um", "ah", "oh", "aha",
            "yeah", "yes", "yep", "yup", "ok", "okay", "right", "sure", "alright", "all right",
            "i see", "got it", "gotcha", "cool", "nice", "great", "good", "wow", "exactly", "true", "indeed",
            // Laughing along is a response, not a bid for the turn.
            "ha", "haha", "hahaha", "heh", "hehe",
        ]

        /// Creates a configuration.
        public init(
            threshold: Float = 0.5,
            playbackThreshold: Float = 0.8,
            minimumSpeechMs: Int = 160,
            maximumBackchannelMs: Int = 900,
            minimumVoicedMs: Int = 60,
            gapToleranceMs: Int = 160,
            backchannels: [String] = Configuration.defaultBackchannels,
            minimumWordConfidence: Float = 0.6
        ) {
            self.threshold = threshold
            self.playbackThreshold = playbackThreshold
            self.minimumSpeechMs = minimumSpeechMs
            self.maximumBackchannelMs = maximumBackchannelMs
            self.minimumVoicedMs = minimumVoicedMs
            self.gapToleranceMs = gapToleranceMs
            self.backchannels = backchannels
            self.minimumWordConfidence = minimumWordConfidence
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

    /// Why a decision was made, for the `parley.interruption` event.
    public enum Reason: String, Sendable, Hashable {
        /// The speech went on past `maximumBackchannelMs`.
        case longSpeech = "long_speech"
        /// The speech's words were more than backchannels.
        case words
        /// The speech's words were only backchannels.
        case backchannel
        /// The speech had no words (a cough, a noise).
        case noWords = "no_words"
        /// The sound was hardly voiced: noise (a cough, a knock), not speech.
        case noVoice = "no_voice"
        /// The speech's words were only words that ask for nothing ("you", "is it"), with or
        /// without backchannels: what a small recognizer makes of a sound it cannot place.
        case noRequest = "no_request"
        /// The recognizer was sure of none of the speech's words (`minimumWordConfidence`).
        case unclearWords = "unclear_words"
    }

    /// Words that ask for nothing on their own: pronouns, articles, auxiliaries. Speech over
    /// the agent heard as nothing but these (and backchannels) lets the agent go on: Whisper
    /// tiny.en hears "you", "you have" or "I" in a short "yeah" or a breath, and "is it?" or
    /// "do you?" said over a speaker is a backchannel. Words that can start a request
    /// ("no", "but", "what", "wait") are not among them.
    public static let emptyWords: Set<String> = [
        "i", "you", "he", "she", "it", "we", "they", "me", "him", "her", "us", "them", "a", "an", "the",
        "is", "are", "was", "were", "am", "be", "do", "does", "did", "have", "has", "had", "of", "to", "and",
    ]

    /// What to do after a frame or a judgement.
    public enum Action: Sendable, Hashable {
        /// Nothing changes.
        case none
        /// Speech that may be an interruption began at `speechStartMs`: pause the agent's audio.
        case pause(speechStartMs: Int)
        /// Transcribe the speech from `speechStartMs` to `speechEndMs` and call
        /// `judged(words:speechStartMs:speechEndMs:)`: it ended before it was long enough to
        /// decide, or it reached `maximumBackchannelMs` and goes on.
        case judge(speechStartMs: Int, speechEndMs: Int)
        /// The speech from `speechStartMs` was an interruption: cancel the response.
        case interrupt(speechStartMs: Int, reason: Reason)
        /// The speech from `speechStartMs` was not an interruption: resume the agent's audio.
        case resume(speechStartMs: Int, reason: Reason)
    }

    private enum Phase: Sendable, Hashable {
        /// No speech while the agent works.
        case listening
        /// Speech is going on (or pausing for less than the gap tolerance); `voicedMs` of it
        /// were voiced.
        case hearing(startMs: Int, lastSpeechMs: Int, paused: Bool, voicedMs: Int)
        /// The speech ended and its words are being transcribed.
        case judging(startMs: Int, endMs: Int, voicedMs: Int)
        /// The speech reached `maximumBackchannelMs` and goes on while its words up to
        /// `checkedEndMs` are transcribed.
        case checkingWords(startMs: Int, lastSpeechMs: Int, voicedMs: Int, checkedEndMs: Int)
        /// The speech interrupted; the rest of it is the person's turn, not a new interruption.
        case interrupted(lastSpeechMs: Int)
        /// Long unvoiced sound let go: it is ignored until it stops or turns into voice.
        case ignoringNoise(lastSoundMs: Int)
    }

    /// What the recognizer is told to expect when it transcribes speech heard over the agent
    /// (Whisper's initial prompt): the short replies said over a speaker, acknowledgements and
    /// requests to stop alike, so a word or two is heard as one of them rather than as a
    /// similar-sounding other word ("yeah" as "you have", "sure" as "share", "wait" as "way",
    /// "stop" as "start", measured with Whisper tiny.en over six flite and eSpeak voices).
    public static let recognitionPrompt = "Mm-hmm. Yeah. Okay. Right. Uh-huh. Sure. Wait. Stop. No."

    /// The tuning in use; may be changed between frames.
    public var configuration: Configuration
    /// Whether speech over the playing agent must stay above `playbackThreshold` to go on, not
    /// just to start. Set while the session cancels its own echo: what the canceller leaves of
    /// the agent's voice hovers at middling probabilities, and would otherwise grow into an
    /// interruption.
    public var holdsPlaybackThreshold = false
    private var phase: Phase = .listening
    private var previousFrameEndMs: Int?
    /// The start of the speech whose words at `maximumBackchannelMs` were only backchannels:
    /// it may go on to twice that length.
    private var backchannelSpeechStartMs: Int?

    /// Creates a policy.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Whether speech heard over the agent is still being decided (the agent is paused or
    /// about to be): the turn it may start is held until the decision.
    public var isDeciding: Bool {
        switch phase {
        case .hearing, .judging, .checkingWords: true
        case .listening, .interrupted, .ignoringNoise: false
        }
    }

    /// Whether the policy is following a sound, so a frame's voicing matters even with the
    /// agent idle.
    public var isFollowingSound: Bool { phase != .listening }

    /// Decides for one frame.
    /// - Parameters:
    ///   - probability: the VAD's speech probability for the frame.
    ///   - voiced: whether the frame is voiced (`Voicing`); only asked of frames that are speech.
    ///   - agent: what the agent is doing.
    ///   - endMs: audio time of the end of the frame.
    public mutating func process(probability: Float, voiced: Bool, agent: AgentActivity, at endMs: Int) -> Action {
        let frameStartMs = previousFrameEndMs ?? endMs
        previousFrameEndMs = endMs
        // Speech starts at the stricter threshold while the agent plays, then goes on at the
        // plain one (the VAD's usual hysteresis): a short word the VAD is sure of only at its
        // peak ("stop") still lasts as long as it was spoken.
        let startThreshold = agent == .speaking ? configuration.playbackThreshold : configuration.threshold
        let goOnThreshold = holdsPlaybackThreshold ? startThreshold : min(startThreshold, configuration.threshold)
        let isSpeech = probability >= (isFollowingSound ? goOnThreshold : startThreshold)
        let frameVoicedMs = isSpeech && voiced ? endMs - frameStartMs : 0
        switch phase {
        case .listening:
            guard agent != .idle, isSpeech else { return .none }
            phase = .hearing(startMs: frameStartMs, lastSpeechMs: endMs, paused: false, voicedMs: frameVoicedMs)
            return decideOnLength(at: endMs)
        case .hearing(let startMs, let lastSpeechMs, let paused, let voicedMs):
            if isSpeech {
                phase = .hearing(startMs: startMs, lastSpeechMs: endMs, paused: paused, voicedMs: voicedMs + frameVoicedMs)
                return decideOnLength(at: endMs)
            }
            guard endMs - lastSpeechMs > configuration.gapToleranceMs else { return .none }
            guard paused else {
                // Too short to be anything: a click, a cough.
                phase = .listening
                return .none
            }
            guard voicedMs >= configuration.minimumVoicedMs else {
                // Sound without a voice: whatever a recognizer would hear in it, it is noise.
                phase = .listening
                return .resume(speechStartMs: startMs, reason: .noVoice)
            }
            phase = .judging(startMs: startMs, endMs: lastSpeechMs, voicedMs: voicedMs)
            return .judge(speechStartMs: startMs, speechEndMs: lastSpeechMs)
        case .judging(let startMs, _, let voicedMs):
            guard isSpeech else { return .none }
            // More speech while the words are transcribed: the same speech goes on.
            phase = .hearing(startMs: startMs, lastSpeechMs: endMs, paused: true, voicedMs: voicedMs + frameVoicedMs)
            return decideOnLength(at: endMs)
        case .checkingWords(let startMs, _, let voicedMs, let checkedEndMs):
            // Its words decide; until then the speech is followed, up to the longest a
            // backchannel may last.
            guard isSpeech else { return .none }
            guard endMs - startMs < 2 * configuration.maximumBackchannelMs else {
                phase = .interrupted(lastSpeechMs: endMs)
                return .interrupt(speechStartMs: startMs, reason: .longSpeech)
            }
            phase = .checkingWords(startMs: startMs, lastSpeechMs: endMs, voicedMs: voicedMs + frameVoicedMs, checkedEndMs: checkedEndMs)
            return .none
        case .interrupted(let lastSpeechMs):
            if isSpeech {
                phase = .interrupted(lastSpeechMs: endMs)
            } else if endMs - lastSpeechMs > configuration.gapToleranceMs {
                phase = .listening
            }
            return .none
        case .ignoringNoise(let lastSoundMs):
            if isSpeech && voiced && agent != .idle {
                // A voice over the noise: heard afresh.
                phase = .hearing(startMs: frameStartMs, lastSpeechMs: endMs, paused: false, voicedMs: frameVoicedMs)
                return decideOnLength(at: endMs)
            }
            if isSpeech {
                phase = .ignoringNoise(lastSoundMs: endMs)
            } else if endMs - lastSoundMs > configuration.gapToleranceMs {
                phase = .listening
            }
            return .none
        }
    }

    /// Takes the transcript of the speech the policy asked to judge.
    /// - Parameters:
    ///   - clearestWordConfidence: how sure the recognizer was of the word it was surest of
    ///     (`Transcription.clearestWordConfidence`), when it says.
    ///   - speechEndMs: the end of the speech transcribed, as `.judge` gave it; when given, words
    ///     of an earlier part of the same speech (it paused, was sent to be judged, then went
    ///     on and paused again) are not taken for the whole.
    /// - Returns: `.interrupt` or `.resume`; `.none` when that speech is no longer being judged
    ///   (more speech followed it, or it was decided otherwise).
    public mutating func judged(
        words transcript: String, clearestWordConfidence: Float? = nil, speechStartMs: Int, speechEndMs: Int? = nil
    ) -> Action {
        let words = Self.words(in: transcript)
        switch phase {
        case .judging(let startMs, let endMs, _) where startMs == speechStartMs && speechEndMs.map({ $0 == endMs }) ?? true:
            if let reason = reasonToLetGo(words, clearestWordConfidence: clearestWordConfidence) {
                phase = .listening
                return .resume(speechStartMs: startMs, reason: reason)
            }
            phase = .interrupted(lastSpeechMs: endMs)
            return .interrupt(speechStartMs: startMs, reason: .words)
        case .checkingWords(let startMs, let lastSpeechMs, let voicedMs, let checkedEndMs)
            where startMs == speechStartMs && speechEndMs.map({ $0 == checkedEndMs }) ?? true:
            // Long speech heard as nothing but backchannels so far may go on; it is judged
            // whole when it ends. Long voiced sound without words is still an interruption.
            guard let reason = reasonToLetGo(words, clearestWordConfidence: clearestWordConfidence), reason != .noWords else {
                phase = .interrupted(lastSpeechMs: lastSpeechMs)
                return .interrupt(speechStartMs: startMs, reason: .longSpeech)
            }
            backchannelSpeechStartMs = startMs
            phase = .hearing(startMs: startMs, lastSpeechMs: lastSpeechMs, paused: true, voicedMs: voicedMs)
            return .none
        default:
            return .none
        }
    }

    /// Why `words` let the agent go on, or `nil` when they ask for the turn.
    private func reasonToLetGo(_ words: [String], clearestWordConfidence: Float?) -> Reason? {
        if words.isEmpty { return .noWords }
        if isOnlyBackchannels(words) { return .backchannel }
        if isOnlyBackchannels(words.filter { !Self.emptyWords.contains($0) }) { return .noRequest }
        if let clearestWordConfidence, clearestWordConfidence < configuration.minimumWordConfidence { return .unclearWords }
        return nil
    }

    /// Forgets any speech being decided.
    public mutating func reset() {
        phase = .listening
        previousFrameEndMs = nil
        backchannelSpeechStartMs = nil
    }

    private mutating func decideOnLength(at endMs: Int) -> Action {
        guard case .hearing(let startMs, let lastSpeechMs, let paused, let voicedMs) = phase else { return .none }
        let speechMs = endMs - startMs
        if speechMs >= configuration.maximumBackchannelMs {
            guard voicedMs >= configuration.minimumVoicedMs else {
                // Long noise (a rustle, a fan starting): the agent goes on over it.
                phase = .ignoringNoise(lastSoundMs: lastSpeechMs)
                return .resume(speechStartMs: startMs, reason: .noVoice)
            }
            guard backchannelSpeechStartMs == startMs else {
                phase = .checkingWords(startMs: startMs, lastSpeechMs: lastSpeechMs, voicedMs: voicedMs, checkedEndMs: lastSpeechMs)
                return .judge(speechStartMs: startMs, speechEndMs: lastSpeechMs)
            }
            if speechMs >= 2 * configuration.maximumBackchannelMs {
                phase = .interrupted(lastSpeechMs: lastSpeechMs)
                return .interrupt(speechStartMs: startMs, reason: .longSpeech)
            }
        }
        // Sound with no voice yet (the hiss of a cough, a knock) does not pause the agent.
        guard !paused, speechMs >= configuration.minimumSpeechMs, voicedMs > 0 else { return .none }
        phase = .hearing(startMs: startMs, lastSpeechMs: lastSpeechMs, paused: true, voicedMs: voicedMs)
        return .pause(speechStartMs: startMs)
    }

    /// Whether `words` can be read as a run of backchannel phrases only.
    private func isOnlyBackchannels(_ words: [String]) -> Bool {
        guard !words.isEmpty else { return true }
        let phrases = Set(configuration.backchannels.map { Self.words(in: $0).joined(separator: " ") })
        let longest = phrases.map { $0.split(separator: " ").count }.max() ?? 0
        // covered[i]: the first i words split into backchannel phrases.
        var covered = [true] + Array(repeating: false, count: words.count)
        for end in 1...words.count {
            for length in 1...max(1, min(longest, end)) where covered[end - length] {
                if phrases.contains(words[(end - length)..<end].joined(separator: " ")) {
                    covered[end] = true
                    break
                }
            }
        }
        return covered[words.count]
    }

    /// The spoken words of a transcript, lower-cased, without punctuation or the recognizer's
    /// bracketed sound labels (`[BLANK_AUDIO]`, `(coughing)`, `*cough*`).
    static func words(in transcript: String) -> [String] {
        var text = ""
        var depth = 0
        for character in transcript.lowercased() {
            switch character {
            case "[", "(", "{": depth += 1
            case "]", ")", "}": depth = max(0, depth - 1)
            case "*": depth = depth > 0 ? depth - 1 : 1
            default:
                guard depth == 0 else { continue }
                text.append(character.isLetter || character.isNumber || character == "'" ? character : " ")
            }
        }
        return text.split(separator: " ").map(String.init)
    }
}
