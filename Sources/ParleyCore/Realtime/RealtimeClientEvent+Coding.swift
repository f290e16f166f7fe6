import Foundation

extension RealtimeClientEvent {
    /// Decodes one client event from the text of a WebSocket message.
    ///
    /// Unknown fields are ignored; both dialects' spellings of session and response settings
    /// are understood, `dialect`'s own winning when a message has both.
    ///
    /// ```swift
    /// let event = try RealtimeClientEvent.decode(#"{"type":"input_audio_buffer.commit"}"#, dialect: .ga)
    /// ```
    /// - Throws: `RealtimeProtocolError` carrying the event's `event_id` when it had one:
    ///   `invalid_json`; `invalid_event` (not an object, or no string `type`); `unknown_event`;
    ///   `invalid_value`, `missing_required_parameter` or `unsupported_value` with `param`
    ///   naming the field.
    public static func decode(_ text: String, dialect: RealtimeDialect) throws(RealtimeProtocolError) -> RealtimeClientEvent {
        let (reader, type, eventID) = try RealtimeEventEnvelope.open(text)
        do throws(RealtimeProtocolError) {
            return try decodeBody(reader, type: type, eventID: eventID, dialect: dialect)
        } catch {
            throw error.attributed(to: eventID)
        }
    }

    private static func decodeBody(
        _ reader: RealtimeJSONReader, type: String, eventID: String?, dialect: RealtimeDialect
    ) throws(RealtimeProtocolError) -> RealtimeClientEvent {
        switch type {
        case "session.update":
            return .sessionUpdate(
                try RealtimeSessionSettings(decoding: try reader.requiredObject("session"), dialect: dialect), eventID: eventID
            )
        case "transcription_session.update":
            // Beta's transcription sessions: a session update that makes the session one.
            var settings = try RealtimeSessionSettings(decoding: try reader.requiredObject("session"), dialect: .beta)
            settings.sessionType = .transcription
            return .sessionUpdate(settings, eventID: eventID)
        case "input_audio_buffer.append":
            return .inputAudioBufferAppend(audio: try reader.requiredString("audio"), eventID: eventID)
        case "input_audio_buffer.commit":
            return .inputAudioBufferCommit(eventID: eventID)
        case "input_audio_buffer.clear":
            return .inputAudioBufferClear(eventID: eventID)
        case "conversation.item.create":
            return .conversationItemCreate(
                item: try RealtimeItem(decoding: try reader.requiredObject("item")),
                previousItemID: try RealtimeItem.decodeID(reader, key: "previous_item_id"), eventID: eventID
            )
        case "conversation.item.delete":
            return .conversationItemDelete(itemID: try requiredID(reader, key: "item_id"), eventID: eventID)
        case "conversation.item.retrieve":
            return .conversationItemRetrieve(itemID: try requiredID(reader, key: "item_id"), eventID: eventID)
        case "conversation.item.truncate":
            return .conversationItemTruncate(
                itemID: try requiredID(reader, key: "item_id"), contentIndex: try reader.requiredInt("content_index"),
                audioEndMs: try reader.requiredInt("audio_end_ms"), eventID: eventID
            )
        case "response.create":
            let options = try reader.object("response").map { response throws(RealtimeProtocolError) in
                try RealtimeResponseOptions(decoding: response, dialect: dialect)
            }
            return .responseCreate(options, eventID: eventID)
        case "response.cancel":
            return .responseCancel(responseID: try RealtimeItem.decodeID(reader, key: "response_id"), eventID: eventID)
        case "output_audio_buffer.clear":
            return .outputAudioBufferClear(eventID: eventID)
        case "parley.key_press":
            guard let key = try reader.string("key"), PhoneKeypad.isKey(key) else {
                throw .invalidValue("key", "expected one key of a phone's keypad: \(PhoneKeypad.keysDescription).")
            }
            return .keyPress(key: key, eventID: eventID)
        default:
            throw RealtimeProtocolError(
                code: "unknown_event",
                message: "Unknown event type \(quotedExcerpt(type)). Supported: \((typeNames + ["transcription_session.update"]).joined(separator: ", ")).",
                param: "type"
            )
        }
    }

    private static func requiredID(_ reader: RealtimeJSONReader, key: String) throws(RealtimeProtocolError) -> String {
        guard let id = try RealtimeItem.decodeID(reader, key: key) else { throw .missing(reader.path(of: key)) }
        return id
    }

    /// The event as the compact JSON text of one WebSocket message in `dialect`.
    public func encode(dialect: RealtimeDialect) -> String {
        let capacity = if case .inputAudioBufferAppend(let audio, _) = self { audio.utf8.count + 96 } else { 256 }
        return RealtimeJSONWriter.object(capacity: capacity) { writer in
            writer.field("type", typeName)
            writer.field("event_id", ifPresent: eventID)
            switch self {
            case .sessionUpdate(let settings, _):
                writer.object("session") { session in
                    if dialect == .ga { session.field("type", settings.sessionType?.rawValue ?? "realtime") }
                    settings.write(to: &session, dialect: dialect)
                }
            case .inputAudioBufferAppend(let audio, _):
                writer.field("audio", audio)
            case .inputAudioBufferCommit, .inputAudioBufferClear, .outputAudioBufferClear:
                break
            case .conversationItemCreate(let item, let previousItemID, _):
                writer.field("previous_item_id", ifPresent: previousItemID)
                writer.object("item") { item.write(to: &$0, dialect: dialect) }
            case .conversationItemDelete(let itemID, _), .conversationItemRetrieve(let itemID, _):
                writer.field("item_id", itemID)
            case .conversationItemTruncate(let itemID, let contentIndex, let audioEndMs, _):
                writer.field("item_id", itemID)
                writer.field("content_index", contentIndex)
                writer.field("audio_end_ms", audioEndMs)
            case .responseCreate(let options, _):
                if let options { writer.object("response") { options.write(to: &$0, dialect: dialect) } }
            case .responseCancel(let responseID, _):
                writer.field("response_id", ifPresent: responseID)
            case .keyPress(let key, _):
                writer.field("key", key)
            }
        }
    }
}

/// The outer shape every realtime event shares: a JSON object with a string `type` and an
/// optional string `event_id`.
enum RealtimeEventEnvelope {
    /// Parses `text` and returns the object's reader, its type and its event id.
    static func open(_ text: String) throws(RealtimeProtocolError) -> (RealtimeJSONReader, String, String?) {
        let value: JSONValue
        switch RealtimeJSONParser.parse(text) {
        case .success(let parsed):
            value = parsed
        case .failure(.syntax(let offset)):
            throw .invalidJSON("syntax error at byte \(offset)")
        case .failure(.tooDeep(let limit)):
            throw .invalidJSON("arrays and objects nest deeper than \(limit) levels")
        }
        guard case .object = value, let reader = try? RealtimeJSONReader(value, path: "") else {
            throw RealtimeProtocolError(
                code: "invalid_event", message: "An event must be a JSON object, got \(value.kindName)."
            )
        }
        let eventID: String?
        switch reader.member("event_id") {
        case nil, .null?: eventID = nil
        case .string(let id)?: eventID = id
        case let other?: throw .invalidValue("event_id", "expected a string, got \(other.kindName).")
        }
        switch reader.member("type") {
        case .string(let type)?:
            return (reader, type, eventID)
        case nil, .null?:
            throw RealtimeProtocolError(
                code: "invalid_event", message: "The event has no 'type'.", param: "type", eventID: eventID
            )
        case let other?:
            throw RealtimeProtocolError(
                code: "invalid_event", message: "The event's 'type' must be a string, got \(other.kindName).",
                param: "type", eventID: eventID
            )
        }
    }
}
