import Foundation

/// Where the time of one answered turn went, stored with its conversation: the end of the
/// caller's speech, the silence window and the turn detector's wait that ended the turn, and
/// from the end of the turn the final transcript, the language model's first token and the
/// first audio out. Milliseconds; `nil` where a stage did not happen (a typed turn has no
/// speech, a failed response no audio).
public struct TurnFiguresRecord: Sendable, Hashable, Codable {
    /// The response that answered the turn (`resp_…`).
    public var responseID: String
    public var conversationID: String
    /// The session it happened in.
    public var sessionID: String
    /// The user item the turn committed, when it was spoken.
    public var userItemID: String?
    /// When the turn ended (the input was committed): the origin of the figures below.
    public var turnEndedAt: Date
    /// Where the caller's speech ended on the session's input audio clock (the recording's), in milliseconds.
    public var speechEndAudioMs: Int?
    /// The silence the turn detector waited for before ending the turn (`server_vad`'s window).
    public var silenceWindowMs: Double?
    /// How long the turn detector waited beyond the silence window before ending the turn (the
    /// semantic judge's extra wait), from the input audio's clock.
    public var detectorWaitMs: Double?
    /// End of turn → final transcript.
    public var transcriptionMs: Double?
    /// End of turn → first token from the language model.
    public var firstTokenMs: Double?
    /// End of turn → first audio out.
    public var firstAudioMs: Double?
    /// How the response ended: `completed`, `cancelled`, `failed`, `incomplete`.
    public var status: String
    /// What the agent wrote but the caller never heard, when the reply was interrupted.
    public var unheardText: String?
    /// The judgements of speech over the agent during the response, in order.
    public var verdicts: [InterruptionVerdict]

    /// Creates turn figures.
    public init(
        responseID: String, conversationID: String, sessionID: String, userItemID: String? = nil, turnEndedAt: Date,
        speechEndAudioMs: Int? = nil, silenceWindowMs: Double? = nil, detectorWaitMs: Double? = nil, transcriptionMs: Double? = nil,
        firstTokenMs: Double? = nil, firstAudioMs: Double? = nil, status: String, unheardText: String? = nil,
        verdicts: [InterruptionVerdict] = []
    ) {
        self.responseID = responseID
        self.conversationID = conversationID
        self.sessionID = sessionID
        self.userItemID = userItemID
        self.turnEndedAt = turnEndedAt
        self.speechEndAudioMs = speechEndAudioMs
        self.silenceWindowMs = silenceWindowMs
        self.detectorWaitMs = detectorWaitMs
        self.transcriptionMs = transcriptionMs
        self.firstTokenMs = firstTokenMs
        self.firstAudioMs = firstAudioMs
        self.status = status
        self.unheardText = unheardText
        self.verdicts = verdicts
    }

    /// From the end of the caller's speech to the first audio out: the silence window, the
    /// detector's wait and the server's own time; `nil` without audio.
    public var voiceToVoiceMs: Double? {
        firstAudioMs.map { $0 + (silenceWindowMs ?? 0) + (detectorWaitMs ?? 0) }
    }
}

/// One judgement of speech over the agent: whether it interrupted, and why.
public struct InterruptionVerdict: Sendable, Hashable, Codable {
    /// Whether the speech interrupted the agent.
    public var interrupts: Bool
    /// The policy's reason (`long_speech`, `words`, `backchannel`, `no_words`, `no_voice`, …).
    public var reason: String
    /// The words heard, when the judgement needed them.
    public var words: String?
    /// Where the speech began, in the input audio's milliseconds.
    public var speechStartMs: Int

    /// Creates a verdict.
    public init(interrupts: Bool, reason: String, words: String? = nil, speechStartMs: Int) {
        self.interrupts = interrupts
        self.reason = reason
        self.words = words
        self.speechStartMs = speechStartMs
    }

    enum CodingKeys: String, CodingKey {
        case interrupts, reason, words, speechStartMs = "speech_start_ms"
    }
}
