import Foundation
import ParleyCore

extension ConversationModel {
    // MARK: Hold to talk

    /// Touch-down on the talk button: listening starts at once (the microphone follows), and
    /// the agent stops talking. In hands-free mode a press only interrupts the agent.
    ///
    /// Each hold has its own token, so a release that arrives before the microphone finished
    /// starting still stops it — a quick tap never leaves the microphone on.
    public func beginHold() {
        guard hold == nil else { return }
        if isHandsFree {
            interruptAgent()
            return
        }
        if microphoneAccess == .denied {
            reportMicrophoneDenied()
            // Settings may have changed since: read the permission again for the next press.
            Task { [weak self] in await self?.refreshMicrophoneAccess() }
            return
        }
        guard connection == .ready else {
            report(.notConnected, "Not connected to Parley right now — reconnecting.")
            return
        }
        interruptAgent()
        clearError(of: [.microphoneFailed, .notConnected, .transcription])
        captureCount += 1
        let token = captureCount
        hold = Hold(token: token, phase: .starting)
        partialTranscript = ""
        capturedMilliseconds = 0
        let previous = captureTask
        captureTask = Task { [weak self] in
            await previous?.value
            await self?.runHold(token)
        }
    }

    /// Release of the talk button: what was said goes straight into the conversation and the
    /// agent is asked to answer; a hold too short to hold words settles back silently.
    public func endHold() {
        release(send: true)
    }

    /// The hold was cancelled (the gesture was interrupted, the app went to the background):
    /// the microphone stops and nothing is sent.
    public func cancelHold() {
        release(send: false)
    }

    private func release(send: Bool) {
        guard var current = hold else { return }
        if case .releasing = current.phase { return }
        current.phase = .releasing(send: send)
        hold = current
        let audio = self.audio
        Task { await audio.stopCapture() }
    }

    /// One hold's capture, from asking for the microphone to sending (or dropping) the audio.
    private func runHold(_ token: Int) async {
        guard await microphoneIsAllowed() else {
            if hold?.token == token { hold = nil }
            return
        }
        guard hold?.token == token, hold?.phase == .starting else {
            // Released before the microphone was even asked to start.
            settleSilently(token)
            return
        }
        let frames: AsyncThrowingStream<CapturedAudio, any Error>
        do {
            frames = try await audio.startCapture()
        } catch {
            if hold?.token == token { hold = nil }
            report(.microphoneFailed, "The microphone could not start (\(error)). Try again, or type instead.")
            return
        }
        isMicrophoneOn = true
        guard hold?.token == token, hold?.phase == .starting else {
            // Released while the microphone was starting: stop it now.
            await audio.stopCapture()
            isMicrophoneOn = false
            settleSilently(token)
            return
        }
        hold?.phase = .capturing

        var sampleCount = 0
        var failure: (any Error)?
        do {
            for try await frame in frames where hold?.token == token {
                send(.inputAudioBufferAppend(audio: PCM16Buffer(samples: frame.samples).base64EncodedString()))
                sampleCount += frame.samples.count
                capturedMilliseconds = AudioFormat.realtime.milliseconds(frameCount: sampleCount)
                microphoneLevel = frame.level
            }
        } catch {
            failure = error
        }
        isMicrophoneOn = false
        microphoneLevel = 0
        let phase = hold?.token == token ? hold?.phase : nil
        if let failure {
            await audio.stopCapture()
            settleSilently(token)
            report(.microphoneFailed, "The microphone stopped working (\(failure)). Try again, or type instead.")
            return
        }
        guard case .releasing(send: true)? = phase,
              AudioFormat.realtime.milliseconds(frameCount: sampleCount) >= options.minimumUtteranceMilliseconds else {
            settleSilently(token)
            if phase == .capturing {
                report(.microphoneFailed, "The microphone stopped by itself. Try again, or type instead.")
            }
            return
        }
        hold = nil
        sendUtterance()
    }

    /// Ends hold `token` without sending anything: the server's input buffer is cleared.
    private func settleSilently(_ token: Int) {
        if hold?.token == token { hold = nil }
        partialTranscript = ""
        capturedMilliseconds = 0
        send(.inputAudioBufferClear())
    }

    /// Release-to-send: the audio becomes a user turn, the entry shows at once with the live
    /// caption, and the agent is asked to answer.
    private func sendUtterance() {
        guard send(.inputAudioBufferCommit()) != nil else {
            report(.notConnected, "The connection dropped before what you said could be sent.")
            partialTranscript = ""
            return
        }
        send(.responseCreate())
        transcript.addSpokenUtterance(text: partialTranscript)
        partialTranscript = ""
        awaitingResponse = true
        syncMessages()
    }

    // MARK: Hands-free

    /// Switches between hold-to-talk and hands-free talking, where the server hears when the
    /// person starts and stops talking, answers by itself, and lets the person talk over it.
    public func setHandsFree(_ on: Bool) {
        guard on != isHandsFree else { return }
        if on, microphoneAccess == .denied {
            reportMicrophoneDenied()
            return
        }
        if hold != nil { cancelHold() }
        isHandsFree = on
        isUserSpeaking = false
        if connection == .ready || connection == .configuring { sendSessionSettings() }
        if on {
            captureCount += 1
            let token = captureCount
            let previous = captureTask
            captureTask = Task { [weak self] in
                await previous?.value
                await self?.runHandsFree(token)
            }
        } else {
            let audio = self.audio
            Task { await audio.stopCapture() }
            send(.inputAudioBufferClear())
            partialTranscript = ""
        }
    }

    /// The continuous capture of hands-free mode: every frame goes to the server.
    private func runHandsFree(_ token: Int) async {
        guard await microphoneIsAllowed() else {
            if captureCount == token { leaveHandsFree() }
            return
        }
        guard isHandsFree, captureCount == token else { return }
        let frames: AsyncThrowingStream<CapturedAudio, any Error>
        do {
            frames = try await audio.startCapture()
        } catch {
            if captureCount == token { leaveHandsFree() }
            report(.microphoneFailed, "The microphone could not start (\(error)). Try again, or type instead.")
            return
        }
        isMicrophoneOn = true
        guard isHandsFree, captureCount == token else {
            await audio.stopCapture()
            isMicrophoneOn = false
            return
        }
        do {
            for try await frame in frames where isHandsFree && captureCount == token {
                send(.inputAudioBufferAppend(audio: PCM16Buffer(samples: frame.samples).base64EncodedString()))
                microphoneLevel = frame.level
            }
        } catch {
            isMicrophoneOn = false
            microphoneLevel = 0
            await audio.stopCapture()
            if captureCount == token { leaveHandsFree() }
            report(.microphoneFailed, "The microphone stopped working (\(error)); hands-free is off. Try again, or type instead.")
            return
        }
        isMicrophoneOn = false
        microphoneLevel = 0
        if isHandsFree, captureCount == token {
            leaveHandsFree()
            report(.microphoneFailed, "The microphone stopped by itself; hands-free is off.")
        }
    }

    private func leaveHandsFree() {
        guard isHandsFree else { return }
        isHandsFree = false
        isUserSpeaking = false
        partialTranscript = ""
        if connection == .ready { sendSessionSettings() }
        send(.inputAudioBufferClear())
    }

    // MARK: Microphone permission

    private func microphoneIsAllowed() async -> Bool {
        microphoneAccess = await audio.requestMicrophoneAccess()
        guard microphoneAccess == .granted else {
            reportMicrophoneDenied()
            return false
        }
        clearError(of: [.microphoneDenied])
        return true
    }

    private func refreshMicrophoneAccess() async {
        microphoneAccess = await audio.requestMicrophoneAccess()
    }

    private func reportMicrophoneDenied() {
        report(.microphoneDenied, "Parley may not use the microphone. Allow it in Settings to talk — you can still type.")
    }

    // MARK: Interruption

    /// Stops the agent at once: playback stops, the response is cancelled (unless the server
    /// already did, on hands-free barge-in), and the item that was playing is cut to what the
    /// listener heard, here and on the server.
    func interruptAgent(serverCancelled: Bool = false) {
        let playback = audio.stopPlayback()
        isPlaying = false
        let responseID = activeResponseID
        guard playback != nil || responseID != nil || awaitingResponse else { return }
        if !serverCancelled, responseID != nil || awaitingResponse {
            send(.responseCancel())
        }
        if responseID == nil, awaitingResponse { discardNextResponse = true }
        if let playback {
            send(.conversationItemTruncate(itemID: playback.itemID, contentIndex: 0, audioEndMs: playback.playedMilliseconds))
        }
        transcript.interrupt(responseID: responseID, playback: playback)
        activeResponseID = nil
        awaitingResponse = false
        syncMessages()
    }
}
