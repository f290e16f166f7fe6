import Foundation

/// Where a piece of streamed output goes: the response, its output item, and the content part.
public struct RealtimeContentPosition: Sendable, Hashable {
    /// The response id.
    public var responseID: String
    /// The output item id.
    public var itemID: String
    /// The item's index in the response's output.
    public var outputIndex: Int
    /// The part's index in the item's content.
    public var contentIndex: Int

    /// Creates a position.
    public init(responseID: String, itemID: String, outputIndex: Int = 0, contentIndex: Int = 0) {
        self.responseID = responseID
        self.itemID = itemID
        self.outputIndex = outputIndex
        self.contentIndex = contentIndex
    }
}

/// The usage reported with a finished input transcription.
public enum RealtimeTranscriptionUsage: Sendable, Hashable {
    /// Billed by audio duration.
    case duration(seconds: Double)
    /// Billed by tokens.
    case tokens(input: Int, output: Int)
}

/// One entry of `rate_limits.updated`.
public struct RealtimeRateLimit: Sendable, Hashable {
    /// `requests` or `tokens`.
    public var name: String
    /// The most allowed.
    public var limit: Int
    /// What is left.
    public var remaining: Int
    /// Seconds until it resets.
    public var resetSeconds: Double

    /// Creates a rate limit entry.
    public init(name: String, limit: Int, remaining: Int, resetSeconds: Double) {
        self.name = name
        self.limit = limit
        self.remaining = remaining
        self.resetSeconds = resetSeconds
    }
}

/// An event the realtime server sends. Encoding gives each a fresh `event_id`.
///
/// A few events exist in one dialect only: `conversationItemAdded` is GA
/// `conversation.item.added` and beta `conversation.item.created`; `conversationItemDone` and
/// `inputAudioBufferTimeoutTriggered` have no beta form and encode to `nil` there.
public enum RealtimeServerEvent: Sendable, Hashable {
    /// `session.created`, the first event of every connection.
    case sessionCreated(RealtimeSessionInfo)
    /// `session.updated`, the full effective session after a `session.update`.
    case sessionUpdated(RealtimeSessionInfo)
    /// `conversation.created`, right after `session.created`: the id of the conversation the
    /// session's responses belong to (its items can be read at `/v1/conversations/{id}/items`).
    case conversationCreated(id: String)
    /// `input_audio_buffer.speech_started`.
    case inputAudioBufferSpeechStarted(itemID: String, audioStartMs: Int)
    /// `input_audio_buffer.speech_stopped`.
    case inputAudioBufferSpeechStopped(itemID: String, audioEndMs: Int)
    /// `input_audio_buffer.committed`.
    case inputAudioBufferCommitted(itemID: String, previousItemID: String?)
    /// `input_audio_buffer.cleared`.
    case inputAudioBufferCleared
    /// `input_audio_buffer.timeout_triggered` (GA only): the idle timeout of server VAD fired.
    case inputAudioBufferTimeoutTriggered(itemID: String, audioStartMs: Int, audioEndMs: Int)
    /// GA `conversation.item.added`, beta `conversation.item.created`.
    case conversationItemAdded(RealtimeItem, previousItemID: String?)
    /// GA `conversation.item.done` (no beta form): the item's content is final.
    case conversationItemDone(RealtimeItem, previousItemID: String?)
    /// `conversation.item.input_audio_transcription.delta`: more of the user's words.
    case inputAudioTranscriptionDelta(itemID: String, contentIndex: Int, delta: String)
    /// `conversation.item.input_audio_transcription.completed`: the user's final words.
    case inputAudioTranscriptionCompleted(
        itemID: String, contentIndex: Int, transcript: String, usage: RealtimeTranscriptionUsage
    )
    /// `conversation.item.input_audio_transcription.failed`.
    case inputAudioTranscriptionFailed(itemID: String, contentIndex: Int, error: RealtimeProtocolError)
    /// `conversation.item.truncated`.
    case conversationItemTruncated(itemID: String, contentIndex: Int, audioEndMs: Int)
    /// `conversation.item.deleted`.
    case conversationItemDeleted(itemID: String)
    /// `conversation.item.retrieved`.
    case conversationItemRetrieved(RealtimeItem)
    /// `response.created`.
    case responseCreated(RealtimeResponse)
    /// `response.done`: exactly once per response, whatever its status.
    case responseDone(RealtimeResponse)
    /// `response.output_item.added`.
    case responseOutputItemAdded(responseID: String, outputIndex: Int, item: RealtimeItem)
    /// `response.output_item.done`.
    case responseOutputItemDone(responseID: String, outputIndex: Int, item: RealtimeItem)
    /// `response.content_part.added`.
    case responseContentPartAdded(RealtimeContentPosition, part: RealtimeContentPart)
    /// `response.content_part.done`.
    case responseContentPartDone(RealtimeContentPosition, part: RealtimeContentPart)
    /// GA `response.output_audio.delta`, beta `response.audio.delta`: base64 pcm16 speech.
    case responseOutputAudioDelta(RealtimeContentPosition, delta: String)
    /// GA `response.output_audio.done`, beta `response.audio.done`.
    case responseOutputAudioDone(RealtimeContentPosition)
    /// GA `response.output_audio_transcript.delta`, beta `response.audio_transcript.delta`.
    case responseOutputAudioTranscriptDelta(RealtimeContentPosition, delta: String)
    /// GA `response.output_audio_transcript.done`, beta `response.audio_transcript.done`.
    case responseOutputAudioTranscriptDone(RealtimeContentPosition, transcript: String)
    /// GA `response.output_text.delta`, beta `response.text.delta`.
    case responseOutputTextDelta(RealtimeContentPosition, delta: String)
    /// GA `response.output_text.done`, beta `response.text.done`.
    case responseOutputTextDone(RealtimeContentPosition, text: String)
    /// `response.function_call_arguments.delta`.
    case responseFunctionCallArgumentsDelta(
        responseID: String, itemID: String, outputIndex: Int, callID: String, delta: String
    )
    /// `response.function_call_arguments.done`.
    case responseFunctionCallArgumentsDone(
        responseID: String, itemID: String, outputIndex: Int, callID: String, name: String, arguments: String
    )
    /// `output_audio_buffer.started` (WebRTC calls): the response's audio began playing out on the call's track.
    case outputAudioBufferStarted(responseID: String)
    /// `output_audio_buffer.stopped` (WebRTC calls): the response's audio has all been played out.
    case outputAudioBufferStopped(responseID: String)
    /// `output_audio_buffer.cleared` (WebRTC calls): the response's audio was stopped at once
    /// (`output_audio_buffer.clear`, or the user talking over it).
    case outputAudioBufferCleared(responseID: String)
    /// An MCP event (`mcp_list_tools.*`, `response.mcp_call*`); GA only.
    case mcp(RealtimeMCPEvent)
    /// `rate_limits.updated`.
    case rateLimitsUpdated([RealtimeRateLimit])
    /// `error`: something went wrong; the session goes on.
    case error(RealtimeProtocolError)
    /// A Parley-only event: `type` starts with `parley.`; the members of `payload` (an object)
    /// are written next to `type` and `event_id`.
    case parley(type: String, payload: JSONValue)
}
