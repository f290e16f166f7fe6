import Foundation

extension RealtimeServerEvent {
    /// The event's `type` in `dialect`, or `nil` when the event has no form there.
    public func typeName(dialect: RealtimeDialect) -> String? {
        let ga = dialect == .ga
        // The beta API has no MCP items: events carrying one have no beta form.
        if !ga, carriesMCPItem { return nil }
        switch self {
        case .sessionCreated: return "session.created"
        case .sessionUpdated(let session) where !ga && session.settings.sessionType == .transcription:
            return "transcription_session.updated"
        case .sessionUpdated: return "session.updated"
        case .conversationCreated: return "conversation.created"
        case .inputAudioBufferSpeechStarted: return "input_audio_buffer.speech_started"
        case .inputAudioBufferSpeechStopped: return "input_audio_buffer.speech_stopped"
        case .inputAudioBufferCommitted: return "input_audio_buffer.committed"
        case .inputAudioBufferCleared: return "input_audio_buffer.cleared"
        case .inputAudioBufferTimeoutTriggered: return ga ? "input_audio_buffer.timeout_triggered" : nil
        case .conversationItemAdded: return ga ? "conversation.item.added" : "conversation.item.created"
        case .conversationItemDone: return ga ? "conversation.item.done" : nil
        case .inputAudioTranscriptionDelta: return "conversation.item.input_audio_transcription.delta"
        case .inputAudioTranscriptionCompleted: return "conversation.item.input_audio_transcription.completed"
        case .inputAudioTranscriptionFailed: return "conversation.item.input_audio_transcription.failed"
        case .conversationItemTruncated: return "conversation.item.truncated"
        case .conversationItemDeleted: return "conversation.item.deleted"
        case .conversationItemRetrieved: return "conversation.item.retrieved"
        case .responseCreated: return "response.created"
        case .responseDone: return "response.done"
        case .responseOutputItemAdded: return "response.output_item.added"
        case .responseOutputItemDone: return "response.output_item.done"
        case .responseContentPartAdded: return "response.content_part.added"
        case .responseContentPartDone: return "response.content_part.done"
        case .responseOutputAudioDelta: return ga ? "response.output_audio.delta" : "response.audio.delta"
        case .responseOutputAudioDone: return ga ? "response.output_audio.done" : "response.audio.done"
        case .responseOutputAudioTranscriptDelta:
            return ga ? "response.output_audio_transcript.delta" : "response.audio_transcript.delta"
        case .responseOutputAudioTranscriptDone:
            return ga ? "response.output_audio_transcript.done" : "response.audio_transcript.done"
        case .responseOutputTextDelta: return ga ? "response.output_text.delta" : "response.text.delta"
        case .responseOutputTextDone: return ga ? "response.output_text.done" : "response.text.done"
        case .responseFunctionCallArgumentsDelta: return "response.function_call_arguments.delta"
        case .responseFunctionCallArgumentsDone: return "response.function_call_arguments.done"
        case .outputAudioBufferStarted: return "output_audio_buffer.started"
        case .outputAudioBufferStopped: return "output_audio_buffer.stopped"
        case .outputAudioBufferCleared: return "output_audio_buffer.cleared"
        case .mcp(let event): return ga ? event.typeName : nil
        case .rateLimitsUpdated: return "rate_limits.updated"
        case .error: return "error"
        case .parley(let type, _): return type
        }
    }

    /// The event as the compact JSON text of one WebSocket message in `dialect`, or `nil` when
    /// the event has no form in that dialect (then send nothing).
    ///
    /// ```swift
    /// let position = RealtimeContentPosition(responseID: responseID, itemID: itemID)
    /// if let text = RealtimeServerEvent.responseOutputAudioDelta(position, delta: base64).encode(dialect: .ga) {
    ///     socket.send(text)
    /// }
    /// ```
    /// - Parameters:
    ///   - dialect: The connection's dialect.
    ///   - eventID: The event's id; a fresh `event_…` by default.
    public func encode(dialect: RealtimeDialect, eventID: String = RealtimeID.event()) -> String? {
        guard let type = typeName(dialect: dialect) else { return nil }
        if case .responseOutputAudioDelta(let position, let delta) = self {
            return Self.encodeAudioDelta(type: type, eventID: eventID, position: position, delta: delta)
        }
        return RealtimeJSONWriter.object { writer in
            writer.field("type", type)
            writer.field("event_id", eventID)
            writeMembers(to: &writer, dialect: dialect)
        }
    }

    /// The hot path (about 25 events a second per speaking session): one preallocated string
    /// with the constant keys written verbatim; only the values are escaped.
    private static func encodeAudioDelta(type: String, eventID: String, position: RealtimeContentPosition, delta: String) -> String {
        var text = ""
        text.reserveCapacity(delta.utf8.count + type.utf8.count + eventID.utf8.count + 160)
        text.append(#"{"type":"#)
        RealtimeJSONWriter.appendQuoted(type, to: &text)
        text.append(#","event_id":"#)
        RealtimeJSONWriter.appendQuoted(eventID, to: &text)
        text.append(#","response_id":"#)
        RealtimeJSONWriter.appendQuoted(position.responseID, to: &text)
        text.append(#","item_id":"#)
        RealtimeJSONWriter.appendQuoted(position.itemID, to: &text)
        text.append(#","output_index":"#)
        text.append(String(position.outputIndex))
        text.append(#","content_index":"#)
        text.append(String(position.contentIndex))
        text.append(#","delta":"#)
        RealtimeJSONWriter.appendQuoted(delta, to: &text)
        text.append("}")
        return text
    }

    private func writeMembers(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        switch self {
        case .sessionCreated(let session), .sessionUpdated(let session):
            writer.object("session") { session.write(to: &$0, dialect: dialect) }
        case .conversationCreated(let id):
            writer.object("conversation") { conversation in
                conversation.field("id", id)
                conversation.field("object", "realtime.conversation")
            }
        case .inputAudioBufferSpeechStarted(let itemID, let audioStartMs):
            writer.field("audio_start_ms", audioStartMs)
            writer.field("item_id", itemID)
        case .inputAudioBufferSpeechStopped(let itemID, let audioEndMs):
            writer.field("audio_end_ms", audioEndMs)
            writer.field("item_id", itemID)
        case .inputAudioBufferCommitted(let itemID, let previousItemID):
            writer.field("previous_item_id", orNull: previousItemID)
            writer.field("item_id", itemID)
        case .inputAudioBufferCleared:
            break
        case .inputAudioBufferTimeoutTriggered(let itemID, let audioStartMs, let audioEndMs):
            writer.field("audio_start_ms", audioStartMs)
            writer.field("audio_end_ms", audioEndMs)
            writer.field("item_id", itemID)
        case .conversationItemAdded(let item, let previousItemID), .conversationItemDone(let item, let previousItemID):
            writer.field("previous_item_id", orNull: previousItemID)
            writer.object("item") { item.write(to: &$0, dialect: dialect) }
        case .inputAudioTranscriptionDelta(let itemID, let contentIndex, let delta):
            writer.field("item_id", itemID)
            writer.field("content_index", contentIndex)
            writer.field("delta", delta)
        case .inputAudioTranscriptionCompleted(let itemID, let contentIndex, let transcript, let usage):
            writer.field("item_id", itemID)
            writer.field("content_index", contentIndex)
            writer.field("transcript", transcript)
            writer.object("usage") { object in
                switch usage {
                case .duration(let seconds):
                    object.field("type", "duration")
                    object.field("seconds", seconds)
                case .tokens(let input, let output):
                    object.field("type", "tokens")
                    object.field("input_tokens", input)
                    object.field("output_tokens", output)
                    object.field("total_tokens", input + output)
                }
            }
        case .inputAudioTranscriptionFailed(let itemID, let contentIndex, let error):
            writer.field("item_id", itemID)
            writer.field("content_index", contentIndex)
            writer.object("error") { Self.writeError(error, includeEventID: false, to: &$0) }
        case .conversationItemTruncated(let itemID, let contentIndex, let audioEndMs):
            writer.field("item_id", itemID)
            writer.field("content_index", contentIndex)
            writer.field("audio_end_ms", audioEndMs)
        case .conversationItemDeleted(let itemID):
            writer.field("item_id", itemID)
        case .conversationItemRetrieved(let item):
            writer.object("item") { item.write(to: &$0, dialect: dialect) }
        case .responseCreated(let response), .responseDone(let response):
            writer.object("response") { response.write(to: &$0, dialect: dialect) }
        case .responseOutputItemAdded(let responseID, let outputIndex, let item),
             .responseOutputItemDone(let responseID, let outputIndex, let item):
            writer.field("response_id", responseID)
            writer.field("output_index", outputIndex)
            writer.object("item") { item.write(to: &$0, dialect: dialect) }
        case .responseContentPartAdded(let position, let part), .responseContentPartDone(let position, let part):
            Self.writePosition(position, to: &writer)
            writer.object("part") { part.writeAsResponsePart(to: &$0) }
        case .responseOutputAudioDelta(let position, let delta),
             .responseOutputAudioTranscriptDelta(let position, let delta),
             .responseOutputTextDelta(let position, let delta):
            Self.writePosition(position, to: &writer)
            writer.field("delta", delta)
        case .responseOutputAudioDone(let position):
            Self.writePosition(position, to: &writer)
        case .responseOutputAudioTranscriptDone(let position, let transcript):
            Self.writePosition(position, to: &writer)
            writer.field("transcript", transcript)
        case .responseOutputTextDone(let position, let text):
            Self.writePosition(position, to: &writer)
            writer.field("text", text)
        case .responseFunctionCallArgumentsDelta(let responseID, let itemID, let outputIndex, let callID, let delta):
            writer.field("response_id", responseID)
            writer.field("item_id", itemID)
            writer.field("output_index", outputIndex)
            writer.field("call_id", callID)
            writer.field("delta", delta)
        case .responseFunctionCallArgumentsDone(let responseID, let itemID, let outputIndex, let callID, let name, let arguments):
            writer.field("response_id", responseID)
            writer.field("item_id", itemID)
            writer.field("output_index", outputIndex)
            writer.field("call_id", callID)
            if dialect == .ga { writer.field("name", name) }
            writer.field("arguments", arguments)
        case .outputAudioBufferStarted(let responseID), .outputAudioBufferStopped(let responseID),
             .outputAudioBufferCleared(let responseID):
            writer.field("response_id", responseID)
        case .mcp(let event):
            event.write(to: &writer)
        case .rateLimitsUpdated(let limits):
            writer.array("rate_limits") { array in
                for limit in limits {
                    array.elementObject { object in
                        object.field("name", limit.name)
                        object.field("limit", limit.limit)
                        object.field("remaining", limit.remaining)
                        object.field("reset_seconds", limit.resetSeconds)
                    }
                }
            }
        case .error(let error):
            writer.object("error") { Self.writeError(error, includeEventID: true, to: &$0) }
        case .parley(_, let payload):
            switch payload {
            case .object(let members):
                for key in members.keys.sorted() where key != "type" && key != "event_id" {
                    writer.field(key, members[key] ?? .null)
                }
            case .null:
                break
            default:
                writer.field("data", payload)
            }
        }
    }

    /// Whether the event carries an `mcp_…` item.
    private var carriesMCPItem: Bool {
        switch self {
        case .conversationItemAdded(let item, _), .conversationItemDone(let item, _), .conversationItemRetrieved(let item),
             .responseOutputItemAdded(_, _, let item), .responseOutputItemDone(_, _, let item):
            item.isMCP
        default:
            false
        }
    }

    private static func writePosition(_ position: RealtimeContentPosition, to writer: inout RealtimeJSONWriter) {
        writer.field("response_id", position.responseID)
        writer.field("item_id", position.itemID)
        writer.field("output_index", position.outputIndex)
        writer.field("content_index", position.contentIndex)
    }

    private static func writeError(_ error: RealtimeProtocolError, includeEventID: Bool, to writer: inout RealtimeJSONWriter) {
        writer.field("type", error.type)
        writer.field("code", error.code)
        writer.field("message", error.message)
        writer.field("param", orNull: error.param)
        if includeEventID { writer.field("event_id", orNull: error.eventID) }
    }
}
