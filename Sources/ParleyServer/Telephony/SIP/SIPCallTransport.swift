import ParleyCore
import ParleyRTC
import ParleySIP
import ParleySync

/// A SIP call as a realtime transport: no client events (a sideband sees them), the caller's
/// audio in (G.711 through the telephone input: echo gate, 16 kHz, bandwidth extension; Opus at
/// the session's rate), the session's speech out in the call's codec, paced by the call, key presses to the agent when it asks, and
/// the call hung up once the agent's goodbye was heard when it called `end_call`.
final class SIPCallTransport: RealtimeTransport {
    let call: SIPCall
    private let keyPressMessages: Bool
    private let hangUp: PendingHangUp
    private let log: EventLog
    /// The session's speech, band-limited down to 8 kHz per response for G.711, as it is for Opus.
    private let output: Locked<OutputAudioEncoder>
    /// The audio item of each response still speaking.
    private let audioItems = Locked<[String: String]>([:])
    /// What the other side said before the session started (answering-machine detection listened to it).
    private let prelude: [Int16]

    /// Carries a session's speech on `call`; `keyPressMessages` tells the agent of key presses;
    /// `hangUp` says when the agent asked to end the call; `prelude` is the call's audio already
    /// heard (at its `sampleRate`), handed to the session first.
    init(
        call: SIPCall, makeResampler: @escaping @Sendable (Int, Int) -> any Resampler, keyPressMessages: Bool, hangUp: PendingHangUp,
        log: EventLog, prelude: [Int16] = []
    ) {
        self.call = call
        self.prelude = prelude
        self.keyPressMessages = keyPressMessages
        self.hangUp = hangUp
        self.log = log
        var encoder = OutputAudioEncoder(makeResampler: makeResampler)
        encoder.use(call.sampleRate == G711.sampleRate ? .pcmu : .pcm16)
        output = Locked(encoder)
    }

    var sendsAudioEvents: Bool { false }

    func receive(isolation: isolated any Actor, _ handle: (RealtimeTransportInput) async -> Void) async {
        var input = TelephoneInput()
        var agentPlaying = false
        if !prelude.isEmpty {
            let isG711 = call.sampleRate == G711.sampleRate
            await handle(.streamedAudio(
                isG711 ? input.samples(prelude, agentPlaying: false) : prelude, sampleRate: isG711 ? TelephoneInput.outputRate : call.sampleRate
            ))
        }
        for await event in call.events {
            switch event {
            case .established:
                break
            case .audio(let samples) where call.sampleRate == G711.sampleRate:
                await handle(.streamedAudio(input.samples(samples, agentPlaying: agentPlaying), sampleRate: TelephoneInput.outputRate))
            case .audio(let samples):
                await handle(.streamedAudio(samples, sampleRate: call.sampleRate))
            case .keyPressed(let key):
                // Which key is never logged: callers type card numbers and PINs.
                log.log("sip.dtmf", session: call.id)
                if keyPressMessages { await handle(.keyPressed(key)) }
            case .outputStarted(let responseID):
                agentPlaying = true
                await handle(.event(.outputAudioBufferStarted(responseID: responseID)))
            case .outputStopped(let responseID):
                agentPlaying = false
                log.log("sip.reply_played", session: call.id, ["response": .string(responseID)])
                if hangUp.isRequested { endCall() }
                await handle(.event(.outputAudioBufferStopped(responseID: responseID)))
            case .ended(let reason):
                await handle(.ended(reason: reason))
            }
        }
    }

    /// Speech goes on the call's own audio, never in events.
    var audioEventMaximumMs: Int? { nil }

    /// A phone has no client to read events: only sidebands see them.
    func send(_ message: OutputPacing.Message) throws {}

    /// Nothing to drop: the call's audio stops only when asked to (`clearOutput`).
    func dropUndeliveredSpeech() {}

    func close(reason: String) {
        call.hangUp()
    }

    /// Speech goes to the call, held while the session weighs speech over it; a cancelled
    /// response, or the caller talking over it, stops the outgoing audio (see `clearOutput`).
    func observe(_ event: VoiceSessionEvent, interruptsOnSpeech: Bool) -> [RealtimeTransportAction] {
        switch event {
        case .agentAudio(let responseID, let itemID, let samples):
            audioItems.withLock { $0[responseID] = itemID }
            call.enqueueAudio(output.withLock { $0.samples(samples, responseID: responseID) }, responseID: responseID, itemID: itemID)
        case .responseDone(let responseID, let status, _, _):
            let rest = output.withLock { $0.remainingSamples(responseID: responseID) }
            guard let itemID = audioItems.withLock({ $0.removeValue(forKey: responseID) }) else {
                // Nothing of this response was said: a goodbye-less end_call hangs up now.
                if hangUp.isRequested { endCall() }
                return []
            }
            if status == .cancelled { return clearOutput() }
            call.enqueueAudio(rest, responseID: responseID, itemID: itemID)
            call.flushAudio(responseID: responseID, itemID: itemID)
        case .speechStarted:
            if interruptsOnSpeech { return clearOutput() }
        case .outputAudioPaused:
            call.pauseAudio()
        case .outputAudioResumed:
            call.resumeAudio()
        default:
            break
        }
        return []
    }

    /// Hangs up because the agent called `end_call`.
    private func endCall() {
        log.log("sip.end_call", session: call.id)
        call.hangUp()
    }

    /// Stops the call's audio at once; the item it was playing is cut to what went out.
    func clearOutput() -> [RealtimeTransportAction] {
        guard let sent = call.clearAudio() else { return [] }
        return [
            .truncate(itemID: sent.itemID, audioEndMs: sent.sentMilliseconds),
            .send(.outputAudioBufferCleared(responseID: sent.responseID)),
        ]
    }
}
