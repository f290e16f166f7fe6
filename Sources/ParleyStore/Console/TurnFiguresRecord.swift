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

    /// Creates turn figures.
    public init(
        responseID: String, conversationID: String, sessionID: String, userItemID: String? = nil, turnEndedAt: Date,
        silenceWindowMs: Double? = nil, detectorWaitMs: Double? = nil, transcriptionMs: Double? = nil,
        firstTokenMs: Double? = nil, firstAudioMs: Double? = nil, status: String
    ) {
        self.responseID = responseID
        self.conversationID = conversationID
        self.sessionID = sessionID
        self.userItemID = userItemID
        self.turnEndedAt = turnEndedAt
        self.silenceWindowMs = silenceWindowMs
        self.detectorWaitMs = detectorWaitMs
        self.transcriptionMs = transcriptionMs
        self.firstTokenMs = firstTokenMs
        self.firstAudioMs = firstAudioMs
        self.status = status
    }

    /// From the end of the caller's speech to the first audio out: the silence window, the
    /// detector's wait and the server's own time; `nil` without audio.
    public var voiceToVoiceMs: Double? {
        firstAudioMs.map { $0 + (silenceWindowMs ?? 0) + (detectorWaitMs ?? 0) }
    }
}
