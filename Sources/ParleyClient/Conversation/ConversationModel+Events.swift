import Foundation
import ParleyCore

extension ConversationModel {
    // MARK: Connection updates

    func handle(_ update: RealtimeClientUpdate) {
        switch update {
        case .connecting:
            if connection != .connecting { connection = .connecting }
        case .connected(let info):
            connection = .configuring
            diagnostics.sessionID = info.id
            diagnostics.sessionsOpened += 1
            seenEventIDs.removeAll()
            sendSessionSettings()
        case .event(let event, let eventID):
            handle(event, eventID: eventID)
        case .unreadable:
            diagnostics.unreadableMessages += 1
        case .disconnected(let problem, let retryIn):
            sessionLost()
            if let retryIn {
                connection = .waiting(retryIn: retryIn)
                let seconds = max(1, Int((Double(retryIn.components.seconds) + Double(retryIn.components.attoseconds) / 1e18).rounded()))
                report(.connection, "\(problem) Reconnecting in \(seconds) s…")
            } else {
                connection = .failed(problem.description)
                report(.connection, problem.description)
            }
        }
    }

    /// Tells the new session how this client talks: manual turns for hold-to-talk, server
    /// turn detection for hands-free.
    func sendSessionSettings() {
        let turnDetection: RealtimeTurnDetection = isHandsFree ? .serverVAD(options.handsFreeTurnDetection) : .manual
        send(.sessionUpdate(RealtimeSessionSettings(turnDetection: turnDetection)))
    }

    /// The session ended: what was in flight is cut where it stood.
    private func sessionLost() {
        if hold != nil { cancelHold() }
        _ = audio.stopPlayback()
        isPlaying = false
        isUserSpeaking = false
        activeResponseID = nil
        awaitingResponse = false
        discardNextResponse = false
        partialTranscript = ""
        transcript.sessionEnded()
        syncMessages()
    }

    // MARK: Server events

    func handle(_ event: RealtimeServerEvent, eventID: String?) {
        if let eventID, !seenEventIDs.insert(eventID) {
            diagnostics.duplicateEvents += 1
            return
        }
        if let type = event.typeName(dialect: .ga) { diagnostics.receivedEvents[type, default: 0] += 1 }
        switch event {
        case .sessionUpdated:
            if connection == .configuring {
                connection = .ready
                clearError(of: [.connection, .notConnected])
            }
        case .inputAudioBufferSpeechStarted:
            isUserSpeaking = true
            if isHandsFree, isPlaying || activeResponseID != nil { interruptAgent(serverCancelled: true) }
        case .inputAudioBufferSpeechStopped:
            isUserSpeaking = false
        case .inputAudioBufferCommitted:
            if isHandsFree {
                isUserSpeaking = false
                awaitingResponse = options.handsFreeTurnDetection.createResponse
            }
        case .responseCreated(let response):
            awaitingResponse = false
            if discardNextResponse {
                discardNextResponse = false
                transcript.interrupt(responseID: response.id, playback: nil)
            } else {
                activeResponseID = response.id
            }
        case .responseOutputAudioDelta(let position, let delta):
            play(delta, position: position)
        case .responseDone(let response):
            diagnostics.lastResponseStatus = response.status
            if activeResponseID == response.id { activeResponseID = nil }
            if response.status == .failed {
                let reason = response.statusDetails?.error?.message ?? "the response failed"
                report(.agent, "The agent could not answer: \(reason)")
            }
        case .conversationItemTruncated(let itemID, _, let audioEndMs):
            diagnostics.lastTruncation = PlaybackPosition(itemID: itemID, playedMilliseconds: audioEndMs)
            if audio.playbackPosition?.itemID == itemID {
                _ = audio.stopPlayback()
                isPlaying = false
            }
        case .inputAudioTranscriptionFailed(_, _, let error):
            report(.transcription, "Parley couldn't make out what you said (\(error.message)). Try again, or type instead.")
        case .error(let error):
            handleServerError(error)
        case .parley(let type, let payload):
            if type == "parley.turn_metrics" { diagnostics.lastTurnMetrics = payload }
        default:
            break
        }
        transcript.apply(event)
        if isListening || hold != nil, let speech = transcript.unplacedSpeech {
            partialTranscript = speech.text
        }
        syncMessages()
    }

    private func play(_ base64: String, position: RealtimeContentPosition) {
        guard !transcript.isDiscarded(responseID: position.responseID) else { return }
        do {
            let buffer = try PCM16Buffer(format: .realtime, base64: base64)
            audio.play(buffer.samples, itemID: position.itemID)
        } catch {
            diagnostics.unreadableMessages += 1
        }
    }

    private func handleServerError(_ error: RealtimeProtocolError) {
        let about = error.eventID.flatMap { sentEventTypes[$0] }
        switch about {
        case "response.cancel"?:
            // The response had already finished: nothing left to cancel.
            return
        case "input_audio_buffer.commit"?:
            transcript.failNewestPendingUtterance()
            interruptAgent()
            report(.server, "What you said could not be sent: \(error.message)")
        case "response.create"?:
            awaitingResponse = false
            report(.agent, "The agent could not answer: \(error.message)")
        default:
            report(.server, error.message)
        }
    }

    // MARK: Playback

    func handlePlayback(_ event: PlaybackEvent) {
        // The events are hints; the speaker's position is the truth (a `started` may arrive
        // after an interruption already stopped the sound).
        switch event {
        case .started, .drained:
            isPlaying = audio.playbackPosition != nil
        }
    }
}
