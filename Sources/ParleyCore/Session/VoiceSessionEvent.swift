import Foundation

/// How a response ended.
public enum ResponseStatus: String, Sendable, Hashable, Codable {
    /// The agent finished speaking.
    case completed
    /// The response was cancelled: by the client, or by the user talking over the agent.
    case cancelled
    /// A provider failed mid-response.
    case failed
    /// The model stopped early (token limit, content filter, step limit).
    case incomplete
}

/// An error a session reports to its client. The session keeps working after it.
public struct SessionError: Error, Sendable, Hashable {
    /// A stable machine-readable code, for example `input_audio_buffer_commit_empty`.
    public var code: String
    /// What went wrong, in words a person can act on.
    public var message: String
    /// The provider error category when a provider failed.
    public var category: ProviderError.Category?
    /// The request field the error is about, when there is one.
    public var parameter: String?

    /// Creates a session error.
    public init(code: String, message: String, category: ProviderError.Category? = nil, parameter: String? = nil) {
        self.code = code
        self.message = message
        self.category = category
        self.parameter = parameter
    }

    /// The session error for a provider failure in `stage` (`transcription`, `response`, `speech`).
    public static func provider(_ error: any Error, stage: String) -> SessionError {
        if let providerError = error as? ProviderError {
            return SessionError(
                code: "\(stage)_failed", message: providerError.message, category: providerError.category
            )
        }
        return SessionError(code: "\(stage)_failed", message: String(describing: error), category: .unknown)
    }
}

/// What a voice session tells its client, in order. Every event names the item and, inside a
/// response, the response it belongs to.
public enum VoiceSessionEvent: Sendable {
    /// The turn detector heard speech start; `itemID` will hold the user's words.
    case speechStarted(itemID: String, audioStartMs: Int)
    /// The turn detector heard speech stop.
    case speechStopped(itemID: String, audioEndMs: Int)
    /// `semantic_vad` judged the pause at `audioMs` in the turn `itemID`: the probability
    /// that the turn is complete, and whether that ended the turn there (a verdict on a pause
    /// the person has since spoken after ends nothing).
    case turnJudged(itemID: String, audioMs: Int, probability: Float, endsTurn: Bool, transcript: String?)
    /// Speech began over the agent and may interrupt it: a client that can should pause the
    /// agent's audio (at input audio time `audioMs`) until `outputAudioResumed` or the response ends.
    case outputAudioPaused(audioMs: Int)
    /// The speech over the agent meant nothing: the agent's audio goes on.
    case outputAudioResumed(audioMs: Int)
    /// Speech from `speechStartMs` over the agent was judged at `audioMs`: an interruption or
    /// not, why, and the words heard when they were needed.
    case interruptionDecided(speechStartMs: Int, audioMs: Int, interrupts: Bool, reason: InterruptionPolicy.Reason, words: String?)
    /// The input audio was committed as a user item.
    case inputCommitted(itemID: String, previousItemID: String?)
    /// The input audio buffer was cleared.
    case inputCleared
    /// Nobody spoke for the idle timeout after the agent's last reply; the silent audio from
    /// `audioStartMs` to `audioEndMs` becomes the (empty) user item `itemID`.
    case idleTimeout(itemID: String, audioStartMs: Int, audioEndMs: Int)
    /// The user's words so far: a full replacement of the text shown for `itemID`.
    case userTranscriptPartial(itemID: String, text: String)
    /// The user's final words for `itemID`, and the language they were heard in (ISO-639-1)
    /// when the recognizer says.
    case userTranscriptFinal(itemID: String, text: String, language: String?)
    /// Transcribing `itemID` failed; the item stays without text.
    case userTranscriptFailed(itemID: String, error: SessionError)
    /// An item was added to the conversation (typed messages, tool outputs, items the client created).
    case itemAdded(itemID: String, previousItemID: String?, message: ChatMessage)
    /// An item reached its final content; persist it now.
    case itemCompleted(itemID: String, message: ChatMessage)
    /// An item was removed from the conversation.
    case itemDeleted(itemID: String)
    /// An assistant item was cut to what the listener heard.
    case itemTruncated(itemID: String, audioEndMs: Int, heardText: String)
    /// A response began, as `request` asked.
    case responseStarted(responseID: String, request: ResponseRequest)
    /// The response started a new output item (an assistant message or a function call),
    /// placed after `previousItemID` (`nil` at the start, or out of band).
    case outputItemStarted(responseID: String, itemID: String, kind: OutputItemKind, previousItemID: String?)
    /// More of the agent's text.
    case agentTextDelta(responseID: String, itemID: String, delta: String)
    /// A chunk of the agent's speech: mono PCM16 at the session's output rate.
    case agentAudio(responseID: String, itemID: String, samples: [Int16])
    /// The agent's message item is complete (with the text as spoken or as cut).
    case outputItemDone(responseID: String, itemID: String, message: ChatMessage)
    /// A server-side tool began running.
    case toolCallStarted(responseID: String, call: ToolCall)
    /// A server-side tool finished.
    case toolCallFinished(responseID: String, call: ToolCall, output: String, isError: Bool)
    /// The model asked the client to run one of the client's tools; the client answers with a
    /// tool output item and asks for a new response.
    case functionCallRequested(responseID: String, itemID: String, call: ToolCall, previousItemID: String?)
    /// The response ended; sent exactly once per `responseStarted`.
    case responseDone(responseID: String, status: ResponseStatus, error: SessionError?, usage: TokenUsage?)
    /// Something went wrong; the session goes on.
    case error(SessionError)
    /// Latency figures of a finished turn.
    case turnMetrics(TurnMetrics)
    /// The session went on as another agent (a transfer tool the model called), or a handoff
    /// was refused (`report.error`, for example past the limit of handoffs in one turn).
    case agentHandoff(AgentHandoffReport)
}

/// What kind of output item a response produces.
public enum OutputItemKind: String, Sendable, Hashable {
    case message
    case functionCall = "function_call"
}
