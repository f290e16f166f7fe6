import Foundation
import ParleyCore

/// Turns a voice session's events into the OpenAI Realtime server events a client expects,
/// keeping the little state the protocol needs (output indexes, transcripts, the output items
/// of each response). A pure value: events in, events out.
struct RealtimeEventTranslator {
    struct ResponseState {
        var output: [RealtimeItem] = []
        var messageItemID: String?
        var cancelReason: RealtimeResponseStatusDetails.Reason = .clientCancelled
        var speaks: Bool
        var request: ResponseRequest

        /// The response object with what is known so far.
        func object(id: String, status: RealtimeResponseStatus, conversationID: String, audioFormat: RealtimeAudioFormat) -> RealtimeResponse {
            RealtimeResponse(
                id: id, status: status, output: output, conversationID: request.isOutOfBand ? nil : conversationID,
                outputModalities: speaks ? [.audio] : [.text], voice: request.voice, maxOutputTokens: request.maxOutputTokens,
                metadata: request.metadata, outputAudioFormat: audioFormat
            )
        }
    }

    /// Whether responses are spoken (audio + transcript) or written (text), unless a response asks otherwise.
    var speaksResponses = true
    /// The client's output audio format and the conversion to it.
    var outputAudio: OutputAudioEncoder
    /// The conversation the session's responses belong to.
    let conversationID: String
    var responses: [String: ResponseState] = [:]
    /// The server of each MCP tool, by tool name: calls of these tools are `mcp_call` items,
    /// and calls waiting for approval `mcp_approval_request` items.
    var mcpServerLabels: [String: String] = [:]
    /// MCP calls in progress, and the approval request of each approved call.
    var mcpCalls = MCPCallItems()
    private var partialTranscripts: [String: String] = [:]
    /// The item before each committed user turn, for its `conversation.item.done`.
    private var committedPredecessors: [String: String?] = [:]
    /// Items announced as added whose `conversation.item.done` waits for `.itemCompleted`,
    /// which comes after the connection has stored them: "done" never precedes the save.
    private var addedItems: [String: (item: RealtimeItem, previousItemID: String?)] = [:]

    /// Creates a translator for a session in `conversationID`; `makeResampler` converts audio
    /// for telephone output formats.
    init(conversationID: String, makeResampler: @escaping @Sendable (Int, Int) -> any Resampler) {
        self.conversationID = conversationID
        outputAudio = OutputAudioEncoder(makeResampler: makeResampler)
    }

    /// The protocol events for one session event.
    mutating func translate(_ event: VoiceSessionEvent) -> [RealtimeServerEvent] {
        switch event {
        case .speechStarted(let itemID, let audioStartMs):
            // A response cancelled from here on was cut off by the user's speech.
            for responseID in responses.keys { responses[responseID]?.cancelReason = .turnDetected }
            return [.inputAudioBufferSpeechStarted(itemID: itemID, audioStartMs: audioStartMs)]
        case .speechStopped(let itemID, let audioEndMs):
            return [.inputAudioBufferSpeechStopped(itemID: itemID, audioEndMs: audioEndMs)]
        case .turnJudged(let itemID, let audioMs, let probability, let endsTurn, let transcript):
            var payload: [String: JSONValue] = [
                "item_id": .string(itemID), "audio_ms": .number(Double(audioMs)),
                "probability": .number(Double(probability)), "ends_turn": .bool(endsTurn),
            ]
            if let transcript { payload["transcript"] = .string(transcript) }
            return [.parley(type: "parley.turn_judged", payload: .object(payload))]
        case .outputAudioPaused(let audioMs):
            return [.parley(type: "parley.output_audio.paused", payload: .object(["audio_ms": .number(Double(audioMs))]))]
        case .outputAudioResumed(let audioMs):
            return [.parley(type: "parley.output_audio.resumed", payload: .object(["audio_ms": .number(Double(audioMs))]))]
        case .interruptionDecided(let speechStartMs, let audioMs, let interrupts, let reason, let words):
            var payload: [String: JSONValue] = [
                "audio_start_ms": .number(Double(speechStartMs)), "audio_ms": .number(Double(audioMs)),
                "interrupts": .bool(interrupts), "reason": .string(reason.rawValue),
            ]
            if let words { payload["words"] = .string(words) }
            return [.parley(type: "parley.interruption", payload: .object(payload))]
        case .inputCommitted(let itemID, let previousItemID):
            committedPredecessors[itemID] = .some(previousItemID)
            if committedPredecessors.count > 64 { committedPredecessors.removeAll() }
            let item = RealtimeItem.message(id: itemID, role: .user, content: [.inputAudio(audio: nil, transcript: nil)], status: .completed)
            return [.inputAudioBufferCommitted(itemID: itemID, previousItemID: previousItemID),
                    .conversationItemAdded(item, previousItemID: previousItemID)]
        case .inputCleared:
            return [.inputAudioBufferCleared]
        case .idleTimeout(let itemID, let audioStartMs, let audioEndMs):
            return [.inputAudioBufferTimeoutTriggered(itemID: itemID, audioStartMs: audioStartMs, audioEndMs: audioEndMs)]
        case .userTranscriptPartial(let itemID, let text):
            // The standard delta appends; when a re-decode revised earlier words, only the
            // Parley event (a full replacement) can say so.
            let previous = partialTranscripts[itemID] ?? ""
            partialTranscripts[itemID] = text
            var events: [RealtimeServerEvent] = [.parley(type: "parley.input_transcript.partial", payload: .object([
                "item_id": .string(itemID), "text": .string(text),
            ]))]
            if text.hasPrefix(previous), text.count > previous.count {
                events.append(.inputAudioTranscriptionDelta(itemID: itemID, contentIndex: 0, delta: String(text.dropFirst(previous.count))))
            }
            return events
        case .userTranscriptFinal(let itemID, let text, let language):
            partialTranscripts[itemID] = nil
            let item = RealtimeItem.message(id: itemID, role: .user, content: [.inputAudio(audio: nil, transcript: text)], status: .completed)
            let previousItemID = committedPredecessors.removeValue(forKey: itemID) ?? nil
            var events: [RealtimeServerEvent] = [
                .inputAudioTranscriptionCompleted(itemID: itemID, contentIndex: 0, transcript: text, usage: .duration(seconds: 0)),
            ]
            // OpenAI's completed event has no field for the language the words were heard in.
            if let language {
                events.append(.parley(type: "parley.input_transcript.language", payload: .object([
                    "item_id": .string(itemID), "language": .string(language),
                ])))
            }
            return events + [.conversationItemDone(item, previousItemID: previousItemID)]
        case .userTranscriptFailed(let itemID, let error):
            partialTranscripts[itemID] = nil
            return [.inputAudioTranscriptionFailed(itemID: itemID, contentIndex: 0, error: RealtimeProtocolError(error))]
        case .itemAdded(let itemID, let previousItemID, let message):
            guard var item = RealtimeItem.items(for: message, spoken: speaksResponses).first else { return [] }
            item.id = itemID
            addedItems[itemID] = (item, previousItemID)
            return [.conversationItemAdded(item, previousItemID: previousItemID)]
        case .itemCompleted(let itemID, _):
            guard let added = addedItems.removeValue(forKey: itemID) else { return [] }
            return [.conversationItemDone(added.item, previousItemID: added.previousItemID)]
        case .itemDeleted(let itemID):
            return [.conversationItemDeleted(itemID: itemID)]
        case .itemTruncated(let itemID, let audioEndMs, _):
            return [.conversationItemTruncated(itemID: itemID, contentIndex: 0, audioEndMs: audioEndMs)]
        case .responseStarted(let responseID, let request):
            let state = ResponseState(speaks: request.speaks ?? speaksResponses, request: request)
            responses[responseID] = state
            return [.responseCreated(state.object(id: responseID, status: .inProgress, conversationID: conversationID, audioFormat: outputAudio.format))]
        case .outputItemStarted(let responseID, let itemID, _, let previousItemID):
            guard var state = responses[responseID] else { return [] }
            let outputIndex = state.output.count
            let item = RealtimeItem.message(id: itemID, role: .assistant, content: [], status: .inProgress)
            state.output.append(item)
            state.messageItemID = itemID
            responses[responseID] = state
            let position = RealtimeContentPosition(responseID: responseID, itemID: itemID, outputIndex: outputIndex)
            let part: RealtimeContentPart = state.speaks ? .outputAudio(audio: nil, transcript: "") : .outputText("")
            var events: [RealtimeServerEvent] = [.responseOutputItemAdded(responseID: responseID, outputIndex: outputIndex, item: item)]
            if !state.request.isOutOfBand {
                addedItems[itemID] = (item, previousItemID)
                events.append(.conversationItemAdded(item, previousItemID: previousItemID))
            }
            events.append(.responseContentPartAdded(position, part: part))
            return events
        case .agentTextDelta(let responseID, let itemID, let delta):
            let position = self.position(responseID, itemID)
            return [speaks(responseID) ? .responseOutputAudioTranscriptDelta(position, delta: delta) : .responseOutputTextDelta(position, delta: delta)]
        case .agentAudio(let responseID, let itemID, let samples):
            let delta = outputAudio.delta(samples, responseID: responseID)
            return delta.isEmpty ? [] : [.responseOutputAudioDelta(position(responseID, itemID), delta: delta)]
        case .outputItemDone(let responseID, let itemID, let message):
            guard var state = responses[responseID] else { return [] }
            let position = self.position(responseID, itemID)
            guard case .assistant(let text, _, let interrupted) = message else { return [] }
            let part: RealtimeContentPart = state.speaks ? .outputAudio(audio: nil, transcript: text) : .outputText(text)
            let item = RealtimeItem.message(id: itemID, role: .assistant, content: [part], status: interrupted ? .incomplete : .completed)
            if position.outputIndex < state.output.count { state.output[position.outputIndex] = item }
            responses[responseID] = state
            var events: [RealtimeServerEvent] = []
            if state.speaks {
                if let rest = outputAudio.finish(responseID: responseID) {
                    events.append(.responseOutputAudioDelta(position, delta: rest))
                }
                events.append(.responseOutputAudioDone(position))
                events.append(.responseOutputAudioTranscriptDone(position, transcript: text))
            } else {
                events.append(.responseOutputTextDone(position, text: text))
            }
            events.append(.responseContentPartDone(position, part: part))
            events.append(.responseOutputItemDone(responseID: responseID, outputIndex: position.outputIndex, item: item))
            if let added = addedItems.removeValue(forKey: itemID) {
                events.append(.conversationItemDone(item, previousItemID: added.previousItemID))
            }
            return events
        case .toolCallStarted(let responseID, let call):
            let started = RealtimeServerEvent.parley(type: "parley.tool_call.started", payload: .object([
                "response_id": .string(responseID), "call_id": .string(call.id), "name": .string(call.name),
                "arguments": .string(call.arguments),
            ]))
            guard let label = mcpServerLabels[call.name] else { return [started] }
            return [started] + mcpCallStarted(responseID: responseID, call: call, serverLabel: label)
        case .toolCallFinished(let responseID, let call, let output, let isError):
            let finished = RealtimeServerEvent.parley(type: "parley.tool_call.finished", payload: .object([
                "response_id": .string(responseID), "call_id": .string(call.id), "name": .string(call.name),
                "is_error": .bool(isError),
            ]))
            return mcpCallFinished(responseID: responseID, call: call, output: output, isError: isError) + [finished]
        case .functionCallRequested(let responseID, let itemID, let call, let previousItemID):
            if let label = mcpServerLabels[call.name] {
                return mcpApprovalRequested(responseID: responseID, itemID: itemID, call: call, serverLabel: label, previousItemID: previousItemID)
            }
            guard var state = responses[responseID] else { return [] }
            let outputIndex = state.output.count
            let pending = RealtimeItem.functionCall(id: itemID, callID: call.id, name: call.name, arguments: "", status: .inProgress)
            let done = RealtimeItem.functionCall(id: itemID, callID: call.id, name: call.name, arguments: call.arguments, status: .completed)
            state.output.append(done)
            responses[responseID] = state
            let inConversation = !state.request.isOutOfBand
            var events: [RealtimeServerEvent] = [.responseOutputItemAdded(responseID: responseID, outputIndex: outputIndex, item: pending)]
            if inConversation { events.append(.conversationItemAdded(pending, previousItemID: previousItemID)) }
            events += [
                .responseFunctionCallArgumentsDelta(responseID: responseID, itemID: itemID, outputIndex: outputIndex, callID: call.id, delta: call.arguments),
                .responseFunctionCallArgumentsDone(responseID: responseID, itemID: itemID, outputIndex: outputIndex, callID: call.id, name: call.name, arguments: call.arguments),
                .responseOutputItemDone(responseID: responseID, outputIndex: outputIndex, item: done),
            ]
            if inConversation { events.append(.conversationItemDone(done, previousItemID: previousItemID)) }
            return events
        case .responseDone(let responseID, let status, let error, let usage):
            guard let state = responses.removeValue(forKey: responseID) else { return [] }
            let details: RealtimeResponseStatusDetails? = switch status {
            case .completed: nil
            case .cancelled: RealtimeResponseStatusDetails(reason: state.cancelReason)
            case .failed: RealtimeResponseStatusDetails(error: error.map { RealtimeProtocolError($0) })
            case .incomplete: RealtimeResponseStatusDetails(reason: .maxOutputTokens)
            }
            var response = state.object(
                id: responseID, status: RealtimeResponseStatus(status), conversationID: conversationID, audioFormat: outputAudio.format
            )
            response.statusDetails = details
            response.usage = usage.map(RealtimeUsage.init)
            return [.responseDone(response)]
        case .error(let error):
            return [.error(RealtimeProtocolError(error))]
        case .turnMetrics(let metrics):
            var payload: [String: JSONValue] = ["response_id": .string(metrics.responseID),
                                                "synthesized_audio_s": .number(metrics.synthesizedAudioSeconds)]
            if let value = metrics.transcriptionMs { payload["transcription_ms"] = .number(value) }
            if let value = metrics.firstTokenMs { payload["first_token_ms"] = .number(value) }
            if let value = metrics.firstSynthesisMs { payload["first_synthesis_ms"] = .number(value) }
            if let value = metrics.firstAudioMs { payload["first_audio_ms"] = .number(value) }
            if let value = metrics.completionTokens { payload["completion_tokens"] = .number(Double(value)) }
            return [.parley(type: "parley.turn_metrics", payload: .object(payload))]
        case .agentHandoff(let report):
            var payload: [String: JSONValue] = ["from_agent": .string(report.fromAgent), "to_agent": .string(report.toAgent)]
            if let reason = report.reason { payload["reason"] = .string(reason) }
            if let error = report.error { payload["error"] = .string(error) }
            return [.parley(type: "parley.handoff", payload: .object(payload))]
        }
    }

    private func speaks(_ responseID: String) -> Bool { responses[responseID]?.speaks ?? speaksResponses }

    private func position(_ responseID: String, _ itemID: String) -> RealtimeContentPosition {
        let index = responses[responseID]?.output.firstIndex { $0.id == itemID } ?? 0
        return RealtimeContentPosition(responseID: responseID, itemID: itemID, outputIndex: index)
    }
}
