import Foundation

/// An event a realtime client sends. Every case carries the client's optional `event_id`,
/// which errors caused by the event repeat.
public enum RealtimeClientEvent: Sendable, Hashable {
    /// `session.update`: change the mentioned settings.
    case sessionUpdate(RealtimeSessionSettings, eventID: String? = nil)
    /// `input_audio_buffer.append`: more input audio, base64 pcm16 exactly as received.
    case inputAudioBufferAppend(audio: String, eventID: String? = nil)
    /// `input_audio_buffer.commit`: make the buffered audio a user item.
    case inputAudioBufferCommit(eventID: String? = nil)
    /// `input_audio_buffer.clear`: drop the buffered audio.
    case inputAudioBufferClear(eventID: String? = nil)
    /// `conversation.item.create`: add an item after `previousItemID` (`root` for the start,
    /// `nil` for the end).
    case conversationItemCreate(item: RealtimeItem, previousItemID: String? = nil, eventID: String? = nil)
    /// `conversation.item.delete`.
    case conversationItemDelete(itemID: String, eventID: String? = nil)
    /// `conversation.item.retrieve`.
    case conversationItemRetrieve(itemID: String, eventID: String? = nil)
    /// `conversation.item.truncate`: cut an assistant item's audio to what was heard.
    case conversationItemTruncate(itemID: String, contentIndex: Int, audioEndMs: Int, eventID: String? = nil)
    /// `response.create`, with optional overrides.
    case responseCreate(RealtimeResponseOptions? = nil, eventID: String? = nil)
    /// `response.cancel`, of the given response or the current one.
    case responseCancel(responseID: String? = nil, eventID: String? = nil)
    /// `output_audio_buffer.clear` (WebRTC in OpenAI's API; accepted here).
    case outputAudioBufferClear(eventID: String? = nil)
    /// `parley.key_press` (Parley's own): the caller pressed `key` on a phone's keypad
    /// (`PhoneKeypad.keys`), as a phone call's key presses reach an agent that asks for them.
    case keyPress(key: String, eventID: String? = nil)

    /// The client's `event_id`, if it sent one.
    public var eventID: String? {
        switch self {
        case .sessionUpdate(_, let eventID), .inputAudioBufferAppend(_, let eventID),
             .inputAudioBufferCommit(let eventID), .inputAudioBufferClear(let eventID),
             .conversationItemCreate(_, _, let eventID), .conversationItemDelete(_, let eventID),
             .conversationItemRetrieve(_, let eventID), .conversationItemTruncate(_, _, _, let eventID),
             .responseCreate(_, let eventID), .responseCancel(_, let eventID), .outputAudioBufferClear(let eventID),
             .keyPress(_, let eventID):
            eventID
        }
    }

    /// The event's `type`, for example `input_audio_buffer.append`.
    public var typeName: String {
        switch self {
        case .sessionUpdate: "session.update"
        case .inputAudioBufferAppend: "input_audio_buffer.append"
        case .inputAudioBufferCommit: "input_audio_buffer.commit"
        case .inputAudioBufferClear: "input_audio_buffer.clear"
        case .conversationItemCreate: "conversation.item.create"
        case .conversationItemDelete: "conversation.item.delete"
        case .conversationItemRetrieve: "conversation.item.retrieve"
        case .conversationItemTruncate: "conversation.item.truncate"
        case .responseCreate: "response.create"
        case .responseCancel: "response.cancel"
        case .outputAudioBufferClear: "output_audio_buffer.clear"
        case .keyPress: "parley.key_press"
        }
    }

    /// Every client event type this codec understands.
    public static let typeNames: [String] = [
        "session.update", "input_audio_buffer.append", "input_audio_buffer.commit", "input_audio_buffer.clear",
        "conversation.item.create", "conversation.item.delete", "conversation.item.retrieve",
        "conversation.item.truncate", "response.create", "response.cancel", "output_audio_buffer.clear", "parley.key_press",
    ]
}
