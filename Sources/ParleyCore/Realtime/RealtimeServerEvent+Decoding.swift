import Foundation

extension RealtimeServerEvent {
    /// Decodes one server event, for clients. Both dialects' spellings are accepted (beta
    /// `conversation.item.created` decodes as `conversationItemAdded`, `response.audio.delta` as
    /// `responseOutputAudioDelta`, …); unknown fields are ignored; any `parley.*` type decodes as
    /// `.parley` with the other members as its payload.
    ///
    /// - Throws: `RealtimeProtocolError`: `unknown_event` for a type this codec does not know
    ///   (a client should skip those), otherwise the shape error naming the field.
    public static func decode(_ text: String) throws(RealtimeProtocolError) -> RealtimeServerEvent {
        let (reader, type, _) = try RealtimeEventEnvelope.open(text)
        if type.hasPrefix("parley.") {
            var payload = reader.members
            payload["type"] = nil
            payload["event_id"] = nil
            return .parley(type: type, payload: .object(payload))
        }
        switch type {
        case "session.created":
            return .sessionCreated(try RealtimeSessionInfo(decoding: try reader.requiredObject("session")))
        case "session.updated", "transcription_session.updated":
            return .sessionUpdated(try RealtimeSessionInfo(decoding: try reader.requiredObject("session")))
        case "conversation.created":
            return .conversationCreated(id: try reader.requiredObject("conversation").requiredString("id"))
        case "input_audio_buffer.speech_started":
            return .inputAudioBufferSpeechStarted(
                itemID: try reader.requiredString("item_id"), audioStartMs: try reader.requiredInt("audio_start_ms")
            )
        case "input_audio_buffer.speech_stopped":
            return .inputAudioBufferSpeechStopped(
                itemID: try reader.requiredString("item_id"), audioEndMs: try reader.requiredInt("audio_end_ms")
            )
        case "input_audio_buffer.committed":
            return .inputAudioBufferCommitted(
                itemID: try reader.requiredString("item_id"), previousItemID: try reader.string("previous_item_id")
            )
        case "input_audio_buffer.cleared":
            return .inputAudioBufferCleared
        case "input_audio_buffer.timeout_triggered":
            return .inputAudioBufferTimeoutTriggered(
                itemID: try reader.requiredString("item_id"), audioStartMs: try reader.requiredInt("audio_start_ms"),
                audioEndMs: try reader.requiredInt("audio_end_ms")
            )
        case "conversation.item.added", "conversation.item.created":
            return .conversationItemAdded(
                try RealtimeItem(decoding: try reader.requiredObject("item")), previousItemID: try reader.string("previous_item_id")
            )
        case "conversation.item.done":
            return .conversationItemDone(
                try RealtimeItem(decoding: try reader.requiredObject("item")), previousItemID: try reader.string("previous_item_id")
            )
        case "conversation.item.input_audio_transcription.delta":
            return .inputAudioTranscriptionDelta(
                itemID: try reader.requiredString("item_id"), contentIndex: try reader.int("content_index") ?? 0,
                delta: try reader.string("delta") ?? ""
            )
        case "conversation.item.input_audio_transcription.completed":
            return .inputAudioTranscriptionCompleted(
                itemID: try reader.requiredString("item_id"), contentIndex: try reader.int("content_index") ?? 0,
                transcript: try reader.requiredString("transcript"), usage: try decodeTranscriptionUsage(reader)
            )
        case "conversation.item.input_audio_transcription.failed":
            return .inputAudioTranscriptionFailed(
                itemID: try reader.requiredString("item_id"), contentIndex: try reader.int("content_index") ?? 0,
                error: try decodeError(try reader.requiredObject("error"))
            )
        case "conversation.item.truncated":
            return .conversationItemTruncated(
                itemID: try reader.requiredString("item_id"), contentIndex: try reader.requiredInt("content_index"),
                audioEndMs: try reader.requiredInt("audio_end_ms")
            )
        case "conversation.item.deleted":
            return .conversationItemDeleted(itemID: try reader.requiredString("item_id"))
        case "conversation.item.retrieved":
            return .conversationItemRetrieved(try RealtimeItem(decoding: try reader.requiredObject("item")))
        case "response.created":
            return .responseCreated(try RealtimeResponse(decoding: try reader.requiredObject("response")))
        case "response.done":
            return .responseDone(try RealtimeResponse(decoding: try reader.requiredObject("response")))
        case "response.output_item.added":
            return .responseOutputItemAdded(
                responseID: try reader.requiredString("response_id"), outputIndex: try reader.requiredInt("output_index"),
                item: try RealtimeItem(decoding: try reader.requiredObject("item"))
            )
        case "response.output_item.done":
            return .responseOutputItemDone(
                responseID: try reader.requiredString("response_id"), outputIndex: try reader.requiredInt("output_index"),
                item: try RealtimeItem(decoding: try reader.requiredObject("item"))
            )
        case "response.content_part.added":
            return .responseContentPartAdded(
                try decodePosition(reader), part: try RealtimeContentPart(decoding: try reader.requiredObject("part"))
            )
        case "response.content_part.done":
            return .responseContentPartDone(
                try decodePosition(reader), part: try RealtimeContentPart(decoding: try reader.requiredObject("part"))
            )
        case "response.output_audio.delta", "response.audio.delta":
            return .responseOutputAudioDelta(try decodePosition(reader), delta: try reader.requiredString("delta"))
        case "response.output_audio.done", "response.audio.done":
            return .responseOutputAudioDone(try decodePosition(reader))
        case "response.output_audio_transcript.delta", "response.audio_transcript.delta":
            return .responseOutputAudioTranscriptDelta(try decodePosition(reader), delta: try reader.requiredString("delta"))
        case "response.output_audio_transcript.done", "response.audio_transcript.done":
            return .responseOutputAudioTranscriptDone(
                try decodePosition(reader), transcript: try reader.requiredString("transcript")
            )
        case "response.output_text.delta", "response.text.delta":
            return .responseOutputTextDelta(try decodePosition(reader), delta: try reader.requiredString("delta"))
        case "response.output_text.done", "response.text.done":
            return .responseOutputTextDone(try decodePosition(reader), text: try reader.requiredString("text"))
        case "response.function_call_arguments.delta":
            return .responseFunctionCallArgumentsDelta(
                responseID: try reader.requiredString("response_id"), itemID: try reader.requiredString("item_id"),
                outputIndex: try reader.requiredInt("output_index"), callID: try reader.requiredString("call_id"),
                delta: try reader.requiredString("delta")
            )
        case "response.function_call_arguments.done":
            return .responseFunctionCallArgumentsDone(
                responseID: try reader.requiredString("response_id"), itemID: try reader.requiredString("item_id"),
                outputIndex: try reader.requiredInt("output_index"), callID: try reader.requiredString("call_id"),
                name: try reader.string("name") ?? "", arguments: try reader.requiredString("arguments")
            )
        case "output_audio_buffer.started":
            return .outputAudioBufferStarted(responseID: try reader.requiredString("response_id"))
        case "output_audio_buffer.stopped":
            return .outputAudioBufferStopped(responseID: try reader.requiredString("response_id"))
        case "output_audio_buffer.cleared":
            return .outputAudioBufferCleared(responseID: try reader.requiredString("response_id"))
        case "rate_limits.updated":
            var limits: [RealtimeRateLimit] = []
            for limit in try reader.objects("rate_limits") ?? [] {
                limits.append(RealtimeRateLimit(
                    name: try limit.string("name") ?? "", limit: try limit.int("limit", in: 0...Int.max) ?? 0,
                    remaining: try limit.int("remaining", in: 0...Int.max) ?? 0,
                    resetSeconds: try limit.double("reset_seconds") ?? 0
                ))
            }
            return .rateLimitsUpdated(limits)
        case "error":
            return .error(try decodeError(try reader.requiredObject("error")))
        default:
            if let event = try RealtimeMCPEvent(type: type, reader) { return .mcp(event) }
            throw RealtimeProtocolError(
                code: "unknown_event", message: "Unknown server event type \(quotedExcerpt(type)).",
                param: "type"
            )
        }
    }

    private static func decodePosition(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> RealtimeContentPosition {
        RealtimeContentPosition(
            responseID: try reader.requiredString("response_id"), itemID: try reader.requiredString("item_id"),
            outputIndex: try reader.requiredInt("output_index"), contentIndex: try reader.requiredInt("content_index")
        )
    }

    private static func decodeTranscriptionUsage(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> RealtimeTranscriptionUsage {
        guard let usage = try reader.object("usage") else { return .duration(seconds: 0) }
        if try usage.string("type") == "tokens" {
            return .tokens(
                input: try usage.int("input_tokens", in: 0...Int.max) ?? 0,
                output: try usage.int("output_tokens", in: 0...Int.max) ?? 0
            )
        }
        return .duration(seconds: try usage.double("seconds") ?? 0)
    }

    private static func decodeError(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> RealtimeProtocolError {
        RealtimeProtocolError(
            type: try reader.string("type") ?? "server_error", code: try reader.string("code") ?? "",
            message: try reader.string("message") ?? "", param: try reader.string("param"),
            eventID: try reader.string("event_id")
        )
    }
}
