import Foundation
import ParleyCore
import ParleyNet
import ParleyStore

/// One phone call on a Twilio media stream, after its `start`: decodes Twilio's messages into
/// calls on the call's voice session and turns the session's audio into `media` and `mark`
/// messages (μ-law, 8 kHz). When the caller talks over audio still playing, it sends `clear`
/// at once, and the stored reply is cut to what the caller heard: up to the last echoed mark.
/// When the agent called `end_call`, the stream closes once its last words were heard (their
/// marks echoed), which ends the call.
actor TwilioCallConnection {
    private let socket: WebSocketConnection
    private let context: ServerContext
    private let session: VoiceSession
    private let start: TwilioStreamStart
    private let conversationID: String
    private let keyPressMessages: Bool
    private let hangUp: PendingHangUp
    /// Whether a response is being written (its audio may not all be sent yet).
    private var responding = false
    private var audio: OutputAudioEncoder
    private var playback: TwilioPlayback
    private var input = TelephoneInput()
    /// Items whose buffered audio was cleared: the rest of their audio is not sent.
    private var silencedItems: Set<String> = []
    /// The response whose audio was sent last.
    private var speakingResponseID: String?
    /// The latest interruption cutting replies to what was heard (each waits for the one
    /// before); the call waits for it before it ends.
    private var interruption: Task<Void, Never>?
    private let items: OrderedItemWriter
    /// Tells the operator console what the call does, and makes its per-turn figures.
    private var console: ConsoleReporter
    /// The call's session configuration (the turn detector's silence window, for the figures).
    private let configuration: VoiceSessionConfiguration
    /// The agent holding the call now (handoffs change it), which each stored item is marked with.
    private var agentID: String?

    /// The voice session's executor, so its events and the caller's messages need no hops.
    nonisolated var unownedExecutor: UnownedSerialExecutor { session.unownedExecutor }

    init(
        socket: WebSocketConnection, context: ServerContext, session: VoiceSession, sessionID: String, configuration: VoiceSessionConfiguration,
        start: TwilioStreamStart, conversationID: String, keyPressMessages: Bool, hangUp: PendingHangUp, agentID: String?
    ) {
        console = ConsoleReporter(sessions: context.sessions, session: session, conversationID: conversationID, sessionID: sessionID)
        self.configuration = configuration
        self.agentID = agentID
        self.hangUp = hangUp
        self.socket = socket
        self.context = context
        self.session = session
        self.start = start
        self.conversationID = conversationID
        self.keyPressMessages = keyPressMessages
        audio = OutputAudioEncoder(makeResampler: session.makeOutputResampler)
        audio.use(.pcmu)
        playback = TwilioPlayback(sampleRate: session.outputSampleRate)
        let log = context.log
        let callSID = start.callSID
        items = OrderedItemWriter(store: context.store, conversationID: conversationID) { [socket] item, failure in
            log.log("store.failed", session: callSID, ["item": .string(item.id)])
            // The call ends rather than talk on unsaved.
            if case .superseded = failure { socket.close(code: WebSocketCloseCode.goingAway, reason: "session superseded") }
        }
    }

    /// Serves the call until Twilio stops the stream or the socket closes.
    func run() async {
        context.log.log("twilio.call_started", session: start.callSID, ["stream": .string(start.streamSID), "conversation": .string(conversationID)])
        await session.deliverEvents { [self] event in
            assumeIsolated { connection in connection.forward(event) }
        }
        for await message in socket.messages {
            guard await receive(message) else { break }
        }
        // Audio still buffered when the call ends was never heard; a reply still being written
        // is stopped (its audio from here on is not sent, so it is cut as well).
        interruptPlayback()
        await session.cancelResponse()
        interruptPlayback()
        await interruption?.value
        await session.close()
        await items.finish()
        context.log.log("twilio.call_ended", session: start.callSID)
    }

    // MARK: Twilio → session

    /// Handles one message; `false` when the stream is over (`stop`, or a malformed message,
    /// which closes the socket).
    private func receive(_ message: WebSocketMessage) async -> Bool {
        let decoded: TwilioInboundMessage
        switch TwilioInboundMessage.decode(message) {
        case .success(let message):
            decoded = message
        case .failure(let problem):
            context.metrics.errorReported(category: "invalid_request")
            context.log.log("twilio.malformed_message", session: start.callSID, ["problem": .string(problem.description)])
            socket.close(code: WebSocketCloseCode.policyViolation, reason: "malformed Media Streams message")
            return false
        }
        switch decoded {
        case .media(let track, let payload):
            guard track == nil || track == "inbound" || track == "inbound_track" else { return true }
            let samples: [Int16]
            do {
                samples = try RealtimeAudioFormat.pcmu.samples(base64: payload)
            } catch {
                context.log.log("twilio.malformed_message", session: start.callSID, ["problem": "media payload is not base64"])
                socket.close(code: WebSocketCloseCode.policyViolation, reason: "media payload is not base64 μ-law")
                return false
            }
            // Calls always take turns by silence, so the session's buffer never fills (its only error).
            try? await session.appendAudio(input.samples(samples, agentPlaying: playback.isPlaying), sampleRate: TelephoneInput.outputRate)
        case .mark(let name):
            playback.acknowledged(name)
            endCallOnceHeard()
        case .dtmf(let digit):
            await keyPressed(digit)
        case .stop:
            return false
        case .connected, .start, .other:
            break
        }
        return true
    }

    /// A key press: logged as an event and, when the agent asks for it, said to the agent.
    private func keyPressed(_ digit: String) async {
        // Which key is never logged: callers type card numbers and PINs.
        context.log.log("twilio.dtmf", session: start.callSID)
        guard keyPressMessages else { return }
        interruptPlayback()
        await session.addItem(PhoneKeypad.message(forKey: digit))
        await session.createResponse()
    }

    // MARK: Session → Twilio

    private func forward(_ event: VoiceSessionEvent) {
        if let turn = console.observe(event, configuration: configuration) { items.save(turn) }
        switch event {
        case .agentAudio(let responseID, let itemID, let samples):
            guard !silencedItems.contains(itemID) else { return }
            speakingResponseID = responseID
            let payload = audio.delta(samples, responseID: responseID)
            if !payload.isEmpty { send(.media(payload: payload)) }
            send(.mark(name: playback.sent(sampleCount: samples.count, itemID: itemID)))
        case .outputItemDone(let responseID, let itemID, let message):
            let rest = audio.finish(responseID: responseID)
            if case .assistant(_, _, true) = message {
                // Cut off (the caller talked over it): no more of its audio, and Twilio drops what it holds.
                interruptPlayback()
            } else if let rest, !silencedItems.contains(itemID) {
                send(.media(payload: rest))
                send(.mark(name: playback.sent(sampleCount: 0, itemID: itemID)))
            }
        case .responseDone(_, let status, _, _):
            responding = false
            // A cancelled reply: stop what Twilio still plays.
            if status == .cancelled { interruptPlayback() }
            endCallOnceHeard()
        case .speechStarted:
            // The caller talked over the agent: stop what Twilio still plays.
            interruptPlayback()
        case .itemCompleted(let itemID, let message):
            items.append(ItemRecord(id: itemID, conversationID: conversationID, message: message, createdAt: Date(), agentID: agentID))
        case .agentHandoff(let report) where report.configuration != nil:
            agentID = report.toAgent
            context.log.log("twilio.handoff", session: start.callSID, ["from": .string(report.fromAgent), "to": .string(report.toAgent)])
        case .responseStarted:
            responding = true
            silencedItems.removeAll()
        case .error(let error):
            context.metrics.errorReported(category: error.category?.rawValue ?? "invalid_request")
        default:
            break
        }
    }

    /// Closes the stream (Twilio then ends the call) when the agent asked to hang up and its
    /// reply is written and heard to the end.
    private func endCallOnceHeard() {
        guard hangUp.isRequested, !responding, !playback.isPlaying else { return }
        context.log.log("twilio.end_call", session: start.callSID)
        socket.close(code: WebSocketCloseCode.normal, reason: "call ended by the agent")
    }

    /// Sends `clear` when audio is still buffered at Twilio, stops the reply it belongs to, and
    /// cuts each item it held to what the caller heard.
    private func interruptPlayback() {
        guard playback.isPlaying else { return }
        send(.clear)
        let cuts = playback.clear()
        silencedItems.formUnion(cuts.map(\.itemID))
        for cut in cuts {
            context.log.log("twilio.playback_cleared", session: start.callSID, ["item": .string(cut.itemID), "heard_ms": .number(Double(cut.heardMs))])
        }
        let session = session
        let responseID = speakingResponseID
        interruption = Task { [interruption] in
            await interruption?.value
            await Self.cut(session, to: cuts, stopping: responseID)
        }
    }

    /// Stops the reply `responseID` if it is still going, then cuts each item to what the
    /// caller heard. In that order: the echoed marks are what the caller heard, and they
    /// replace whatever the session estimated when the reply ended.
    private static func cut(_ session: VoiceSession, to cuts: [TwilioPlayback.Cut], stopping responseID: String?) async {
        guard !cuts.isEmpty else { return }
        if let responseID { await session.cancelResponse(id: responseID) }
        for cut in cuts { await session.truncate(itemID: cut.itemID, audioEndMs: cut.heardMs) }
    }

    private func send(_ message: TwilioOutboundMessage) {
        // A closed socket ends the message loop, which ends the call.
        try? socket.send(.text(message.encode(streamSID: start.streamSID)))
    }
}
