import Foundation
import ParleyCore
import ParleyNet
import ParleyStore

/// One realtime client: decodes its events into calls on its voice session, and turns the
/// session's events into protocol events on its transport (a WebSocket, a WebRTC call, or any
/// other `RealtimeTransport`). Items are stored as they complete.
actor RealtimeConnection {
    private let transport: any RealtimeTransport
    /// The most out-of-band responses (`conversation: "none"`) a session runs at once.
    static let maximumOutOfBandResponses = 4
    /// What the client may still send (events and audio).
    private var trafficBudget = ClientTrafficBudget(started: .now)
    /// Whether the session was closed for sending too much; later messages are dropped.
    private var closedForExceedingBudget = false
    /// Whether a full input buffer was reported since it last emptied: a media track keeps
    /// streaming (silence, between hold-to-talk turns), and one error says it all.
    private var reportedFullInputBuffer = false
    private let dialect: RealtimeDialect
    private let context: ServerContext
    let session: VoiceSession
    /// The id the session was admitted under (`SessionAdmission`).
    private let sessionID: String
    private let conversationID: String
    private let instanceID: String?
    private var configuration: VoiceSessionConfiguration
    var translator: RealtimeEventTranslator
    /// Whether the client asked for Parley's own `parley.*` events (`?parley_events=true` or
    /// the session field `parley_events`); other clients get only events in OpenAI's schema.
    private var sendsParleyEvents: Bool
    /// How the client asked for its audio to be transcribed, reported back in the session.
    private var inputTranscription = RealtimeInputTranscription.enabled(model: RealtimeConnection.transcriptionModel, language: nil, prompt: nil)
    /// The format of the client's input audio.
    private var inputAudioFormat = RealtimeAudioFormat.pcm16
    /// Whether the client made this a transcription session: audio in, transcripts out, no responses.
    private var isTranscriptionSession = false
    /// The most recent responses that ended cancelled: cancelling one again is a no-op.
    private var cancelledResponseIDs: [String] = []
    /// Whether the last response to end was cancelled (a `response.cancel` racing it is a no-op).
    private var lastResponseWasCancelled = false
    /// Backends watching and steering this call over `/v1/realtime?call_id=…` (WebRTC and SIP calls).
    private var sidebands: [WebSocketConnection] = []
    /// Makes the session's per-turn trace spans, when traces are exported.
    private var tracer: TurnTracer?
    /// Tells the operator console what the session does, and makes the per-turn figures stored with the conversation.
    private var console: ConsoleReporter
    /// Stores the session's items in order, off this executor.
    private lazy var items = OrderedItemWriter(store: context.store, conversationID: conversationID) { [self] item, failure in
        await storeFailed(item, failure)
    }
    /// The events sent since each store write still under way was queued, oldest write first.
    /// An item's events go out only once the item is stored (so whatever a client saw completed
    /// survives a crash), and every event after them waits its turn, so nothing overtakes them.
    private var eventsAwaitingWrites: [[OutputPacing.Message]] = []

    /// The session's MCP servers, their clients and tool lists.
    let mcpToolbox = MCPToolbox()
    /// The MCP servers of the agent holding the session; the session's own (from
    /// `session.update`) come after them.
    private var agentMCPServers: [MCPServerConfiguration]
    /// The session's handoffs: the agents it may become.
    private let handoffs: SessionHandoffs?
    /// Whether the session's agent asks to be told of key presses (`telephony.key_press_messages`),
    /// which `parley.key_press` events then make.
    private let keyPressMessages: Bool
    /// The agent holding the session now, which each stored item is marked with.
    private var agentID: String?
    /// Whether `session.update` may name MCP servers (the backend, or every client when the server allows it).
    private let allowsSessionMCPServers: Bool
    /// Which addresses the MCP servers `session.update` names may be reached at; `nil` (any) for the backend.
    private let sessionMCPServerPolicy: OutboundPolicy?
    private var sessionMCPServers: [MCPServerConfiguration] = []
    /// The MCP server update under way, if any.
    var mcpUpdate: Task<Void, Never>?

    /// The transcription model reported to clients: Parley transcribes with Whisper.
    static let transcriptionModel = "whisper-1"

    /// The voice session's executor: every received event calls into the session, and sharing
    /// its executor makes those calls (and the message stream's resumptions) free of hops.
    nonisolated var unownedExecutor: UnownedSerialExecutor { session.unownedExecutor }

    init(
        transport: any RealtimeTransport, dialect: RealtimeDialect, context: ServerContext, session: VoiceSession, sessionID: String,
        configuration: VoiceSessionConfiguration, conversationID: String, instanceID: String?, sendsParleyEvents: Bool,
        tracer: TurnTracer? = nil, mcpServers: [MCPServerConfiguration] = [], allowsSessionMCPServers: Bool = false,
        sessionMCPServerPolicy: OutboundPolicy? = nil, handoffs: SessionHandoffs? = nil, keyPressMessages: Bool = false
    ) {
        agentMCPServers = mcpServers
        self.keyPressMessages = keyPressMessages
        self.handoffs = handoffs
        agentID = handoffs?.startingAgentID
        self.allowsSessionMCPServers = allowsSessionMCPServers
        self.sessionMCPServerPolicy = sessionMCPServerPolicy
        self.tracer = tracer
        self.tracer?.agentID = handoffs?.startingAgentID
        self.transport = transport
        self.sendsParleyEvents = sendsParleyEvents
        translator = RealtimeEventTranslator(conversationID: conversationID, makeResampler: session.makeOutputResampler)
        self.dialect = dialect
        self.context = context
        self.session = session
        self.configuration = configuration
        self.conversationID = conversationID
        self.instanceID = instanceID
        self.sessionID = sessionID
        console = ConsoleReporter(sessions: context.sessions, session: session, conversationID: conversationID, sessionID: sessionID)
        translator.speaksResponses = configuration.speaksResponses
    }

    /// Serves the connection until the client leaves or the session ends; `sessionUpdate` (a
    /// `session.update` event, as a WebRTC call's `session` part gives it) is applied first.
    func run(applying sessionUpdate: String? = nil) async {
        send(.sessionCreated(sessionInfo))
        send(.conversationCreated(id: conversationID))
        if let sessionUpdate { await receive(.text(sessionUpdate)) }
        context.log.log("session.started", session: sessionID, ["dialect": .string(dialect.rawValue)])
        // The session's events are sent as they happen: this actor runs on the session's
        // executor, so the handler is already isolated to it.
        await session.deliverEvents { [self] event in
            assumeIsolated { connection in connection.forward(event) }
        }
        if !agentMCPServers.isEmpty { useMCPServers(agentMCPServers.map { MCPToolbox.Server(configuration: $0) }) }
        // In the connection's own handler task, which ParleyNet hands messages to most cheaply.
        // The server ends a session early (shutdown, the instance deleted, its length reached)
        // by closing its socket.
        let lengthLimit = Task { [self, maximum = context.settings.maximumSessionLength] in
            guard (try? await Task.sleep(for: maximum)) != nil else { return }
            endAtLengthLimit(maximum)
        }
        await receiveEvents()
        lengthLimit.cancel()
        mcpUpdate?.cancel()
        await mcpToolbox.close()
        // The session's last items are stored before the connection is done.
        await items.finish()
        for sideband in sidebands { sideband.close(code: WebSocketCloseCode.normal, reason: "call ended") }
        tracer?.finish()
        context.log.log("session.ended", session: sessionID)
    }

    /// Ends a session whose client sent more than its budget allows: an error event, then the
    /// connection closed; what it sends after that is dropped.
    private func closeForExceedingBudget(_ violation: ClientTrafficBudget.Violation) {
        closedForExceedingBudget = true
        context.log.log("session.rate_limited", session: sessionID, ["reason": .string(violation.message)])
        context.metrics.errorReported(category: "rate_limited")
        end(with: RealtimeProtocolError(type: "invalid_request_error", code: "rate_limit_exceeded", message: violation.message), reason: "rate limit exceeded")
    }

    /// Tells the client why its session ends, then closes the connection. The error goes out at
    /// once, ahead of events still waiting for a store write, which a closed connection never sends.
    private func end(with error: RealtimeProtocolError, reason: String) {
        context.metrics.errorReported(category: "invalid_request")
        writeAtOnce(.error(error))
        eventsAwaitingWrites = eventsAwaitingWrites.map { _ in [] }
        transport.close(reason: reason)
    }

    /// Ends a session that reached the longest a session may last, as OpenAI does: an error
    /// event, then the connection closed.
    private func endAtLengthLimit(_ maximum: Duration) {
        let seconds = maximum.components.seconds
        context.log.log("session.expired", session: sessionID, ["seconds": .number(Double(seconds))])
        let length = seconds % 60 == 0 ? "\(seconds / 60) minutes" : maximum.secondsText
        end(with: RealtimeProtocolError(
            type: "invalid_request_error", code: "session_expired", message: "Your session hit the maximum duration of \(length)."
        ), reason: "session expired")
    }

    private var sessionInfo: RealtimeSessionInfo {
        var settings = RealtimeSessionSettings(
            configuration, inputTranscription: inputTranscription, inputAudioFormat: inputAudioFormat,
            outputAudioFormat: translator.outputAudio.format
        )
        settings.sessionType = isTranscriptionSession ? .transcription : nil
        if !sessionMCPServers.isEmpty { settings.mcpServers = sessionMCPServers }
        return RealtimeSessionInfo(
            id: sessionID, model: "parley", expiresAt: Int(Date().timeIntervalSince1970) + Int(context.settings.maximumSessionLength.components.seconds), settings: settings
        )
    }

    /// Serves a backend's sideband socket on this call: it sees every event the call's client
    /// sees from now on, and its events steer the session as the client's do.
    func serveSideband(_ socket: WebSocketConnection) async {
        sidebands.append(socket)
        if let text = RealtimeServerEvent.sessionUpdated(sessionInfo).encode(dialect: dialect) { try? socket.send(.text(text)) }
        for await message in socket.messages {
            await receive(message)
        }
        sidebands.removeAll { $0 === socket }
    }

    // MARK: Client → session

    /// Handles what the client sends in order, on this actor, until it leaves.
    private func receiveEvents() async {
        await transport.receive(isolation: self) { input in await receive(input) }
        await session.close()
    }

    /// One input of the transport: a client message, streamed audio, or news of the transport.
    private func receive(_ input: RealtimeTransportInput) async {
        switch input {
        case .message(let message):
            await receive(message)
        case .streamedAudio(let samples, let sampleRate):
            do {
                try await session.appendAudio(samples, sampleRate: sampleRate)
            } catch {
                guard error.code == "input_audio_buffer_full" else { return reportError(RealtimeProtocolError(error, eventID: nil)) }
                if !reportedFullInputBuffer { reportError(RealtimeProtocolError(error, eventID: nil)) }
                reportedFullInputBuffer = true
            }
        case .event(let event):
            send(event)
        case .refused(let message):
            reportError(RealtimeProtocolError(code: "invalid_event", message: message))
        case .keyPressed(let key):
            await pressKey(key)
        case .ended(let reason):
            context.log.log("call.ended", session: sessionID, ["reason": .string(reason)])
        }
    }

    private func receive(_ message: WebSocketMessage) async {
        guard !closedForExceedingBudget else { return }
        if let violation = trafficBudget.admitEvent(at: .now) { return closeForExceedingBudget(violation) }
        guard case .text(let text) = message else {
            reportError(RealtimeProtocolError(code: "invalid_event", message: "Binary messages are not part of the protocol; send JSON text events."))
            return
        }
        if let append = AppendEventScanner.scan(text) {
            await handle(.inputAudioBufferAppend(audio: append.audio, eventID: append.eventID))
            return
        }
        let event: RealtimeClientEvent
        do {
            event = try RealtimeClientEvent.decode(text, dialect: dialect)
        } catch {
            reportError(error)
            return
        }
        await handle(event)
    }

    private func handle(_ event: RealtimeClientEvent) async {
        switch event {
        case .sessionUpdate(let update, let eventID):
            let tools = (update.tools ?? configuration.clientTools) + (await session.serverTools)
            if let problem = RealtimeSettingsValidation.problem(in: update, tools: tools, recognizerLanguages: session.recognizerLanguages, dialect: dialect) {
                reportError(RealtimeProtocolError(code: "invalid_value", message: problem.message, param: problem.param, eventID: eventID))
                return
            }
            if case .serverVAD(let vad)? = update.turnDetection, vad.eagerness != nil, !session.judgesTurnCompletion {
                reportError(RealtimeProtocolError(
                    code: "invalid_value",
                    message: "semantic_vad needs the Smart Turn model, which this server has not loaded (run scripts/setup); use server_vad. The session is unchanged.",
                    param: "session.turn_detection.type", eventID: eventID
                ))
                return
            }
            if case .some(.some) = update.noiseReduction, !session.suppressesNoise {
                reportError(RealtimeProtocolError(
                    code: "invalid_value", message: "This server has no noise suppressor; use noise_reduction: null. The session is unchanged.",
                    param: "session.audio.input.noise_reduction", eventID: eventID
                ))
                return
            }
            if let servers = update.mcpServers, !servers.isEmpty, !allowsSessionMCPServers {
                reportError(RealtimeProtocolError(
                    code: "mcp_servers_not_allowed",
                    message: "MCP servers in session.tools are taken only from the backend (the server secret), since the server calls "
                        + "whatever URL they name; with a client token, use the agent's mcp_servers (or set PARLEY_MCP_CLIENT_SERVERS=on). "
                        + "The session is unchanged.",
                    param: "session.tools", eventID: eventID
                ))
                return
            }
            if update.echoCancellation == true, !session.cancelsEcho {
                reportError(RealtimeProtocolError(
                    code: "invalid_value", message: "This server has no echo canceller. The session is unchanged.",
                    param: "session.parley_echo_cancellation", eventID: eventID
                ))
                return
            }
            configuration = update.applied(to: configuration)
            // Every session.update is of one kind or the other; only a transcription one says so.
            isTranscriptionSession = update.sessionType == .transcription
            if isTranscriptionSession { configuration.turnDetection?.createResponse = false }
            if let transcription = update.inputTranscription { inputTranscription = transcription }
            if let format = update.inputAudioFormat { inputAudioFormat = format }
            if let format = update.outputAudioFormat { translator.outputAudio.use(format) }
            if let parleyEvents = update.parleyEvents { sendsParleyEvents = parleyEvents }
            // A `tools` array replaces every tool, the MCP servers among them included.
            if update.tools != nil || update.mcpServers != nil {
                sessionMCPServers = update.mcpServers ?? []
                useAgentAndSessionMCPServers()
            }
            translator.speaksResponses = configuration.speaksResponses
            await session.update(configuration: configuration)
            send(.sessionUpdated(sessionInfo))
        case .inputAudioBufferAppend(let audio, let eventID):
            let samples: [Int16]
            do {
                samples = try inputAudioFormat.samples(base64: audio)
            } catch {
                let expected = inputAudioFormat == .pcm16 ? "base64 pcm16 (16-bit little-endian samples)" : "base64 G.711 (\(inputAudioFormat.betaName))"
                reportError(RealtimeProtocolError(code: "invalid_value", message: "audio must be \(expected): \(error)", param: "audio", eventID: eventID))
                return
            }
            let audioSeconds = Double(samples.count) / Double(inputAudioFormat.sampleRate)
            if let violation = trafficBudget.admitAudio(seconds: audioSeconds, at: .now) { return closeForExceedingBudget(violation) }
            do {
                try await session.appendAudio(samples, sampleRate: inputAudioFormat.sampleRate)
            } catch {
                reportError(RealtimeProtocolError(error, eventID: eventID))
            }
        case .inputAudioBufferCommit(let eventID):
            do {
                try await session.commitAudio(createResponse: false)
            } catch {
                reportError(RealtimeProtocolError(error, eventID: eventID))
            }
        case .inputAudioBufferClear:
            await session.clearAudio()
        case .conversationItemCreate(let item, let previousItemID, let eventID):
            if case .mcpApprovalResponse(let requestID, let approve, let reason) = item.kind {
                await answerApproval(item, approvalRequestID: requestID, approve: approve, reason: reason, eventID: eventID)
                return
            }
            guard let message = item.chatMessage else {
                reportError(RealtimeProtocolError(code: "invalid_value", message: "The item has no content a model can read (text, a transcript, a function call or its output).", param: "item", eventID: eventID))
                return
            }
            let placement: VoiceSession.ItemPlacement
            switch previousItemID {
            case nil: placement = .end
            case "root"?: placement = .start
            case let previousItemID?:
                guard await session.ledger.contains(id: previousItemID) else {
                    reportError(RealtimeProtocolError(code: "item_not_found", message: "previous_item_id \(previousItemID) is not in the conversation.", param: "previous_item_id", eventID: eventID))
                    return
                }
                placement = .after(previousItemID)
            }
            if let id = item.id, await session.ledger.contains(id: id) {
                reportError(RealtimeProtocolError(code: "item_create_duplicate_item_id", message: "The conversation already has an item \(id); item ids must be unique.", param: "item.id", eventID: eventID))
                return
            }
            await session.addItem(message, id: item.id ?? RealtimeID.item(), placement: placement)
        case .conversationItemDelete(let itemID, let eventID):
            if !(await session.deleteItem(id: itemID)) {
                reportError(RealtimeProtocolError(code: "item_not_found", message: "No item \(itemID) in the conversation.", param: "item_id", eventID: eventID))
            }
        case .conversationItemRetrieve(let itemID, let eventID):
            guard let content = await session.content(ofItem: itemID) else {
                reportError(RealtimeProtocolError(code: "item_not_found", message: "No item \(itemID) in the conversation.", param: "item_id", eventID: eventID))
                return
            }
            send(.conversationItemRetrieved(retrievedItem(itemID, content)))
        case .conversationItemTruncate(let itemID, _, let audioEndMs, let eventID):
            if audioEndMs < 0 {
                reportError(RealtimeProtocolError(code: "invalid_value", message: "audio_end_ms must not be negative.", param: "audio_end_ms", eventID: eventID))
                return
            }
            // The client stopped playing: the speech not yet sent to it goes.
            transport.dropUndeliveredSpeech()
            if !(await session.truncate(itemID: itemID, audioEndMs: audioEndMs)) {
                reportError(RealtimeProtocolError(code: "item_not_found", message: "No assistant audio item \(itemID) to truncate.", param: "item_id", eventID: eventID))
            }
        case .responseCreate(let options, let eventID):
            guard !isTranscriptionSession else { return refuseInTranscriptionSession(eventID: eventID) }
            let options = options ?? RealtimeResponseOptions()
            if let problem = RealtimeSettingsValidation.problem(in: options, sessionTools: configuration.clientTools + (await session.serverTools)) {
                reportError(RealtimeProtocolError(code: "invalid_value", message: problem.message, param: problem.param, eventID: eventID))
                return
            }
            let request: ResponseRequest
            do {
                request = try options.responseRequest()
            } catch {
                reportError(error.attributed(to: eventID))
                return
            }
            if request.isOutOfBand, await session.outOfBandResponsesInFlight >= Self.maximumOutOfBandResponses {
                reportError(RealtimeProtocolError(
                    code: "too_many_responses", message: "At most \(Self.maximumOutOfBandResponses) out-of-band responses run at once; wait for one to finish.",
                    eventID: eventID
                ))
                return
            }
            await session.createResponse(request)
        case .responseCancel(let responseID, let eventID):
            transport.dropUndeliveredSpeech()
            if await session.cancelResponse(id: responseID) { return }
            // A cancel racing the end of the response it meant (the client's interruption
            // arrived as the response ended, or was already cancelled by the user's speech).
            let alreadyCancelled = responseID.map { cancelledResponseIDs.contains($0) } ?? lastResponseWasCancelled
            if !alreadyCancelled {
                reportError(RealtimeProtocolError(code: "response_cancel_not_active", message: "There is no response in progress to cancel.", param: responseID == nil ? nil : "response_id", eventID: eventID))
            }
        case .outputAudioBufferClear:
            perform(transport.clearOutput())
            await session.cancelResponse()
        case .keyPress(let key, let eventID):
            guard !isTranscriptionSession else { return refuseInTranscriptionSession(eventID: eventID) }
            guard keyPressMessages else {
                reportError(RealtimeProtocolError(
                    code: "key_presses_off",
                    message: "This session's agent does not take key presses: set the agent's telephony.key_press_messages to true. The session is unchanged.",
                    param: "key", eventID: eventID
                ))
                return
            }
            // Which key is never logged: callers type card numbers and PINs.
            context.log.log("session.key_press", session: sessionID)
            await pressKey(key)
        }
    }

    /// Refuses what would create a response in a transcription session.
    private func refuseInTranscriptionSession(eventID: String?) {
        reportError(RealtimeProtocolError(code: "invalid_value", message: "This is a transcription session: it transcribes the audio and creates no responses. Switch the session's type to 'realtime' for answers.", param: "session.type", eventID: eventID))
    }

    /// A key press the agent asks for (a phone's, or a `parley.key_press` event): its speech
    /// stops, it is told which key, and it answers.
    private func pressKey(_ key: String) async {
        perform(transport.clearOutput())
        await session.addItem(PhoneKeypad.message(forKey: key))
        await session.createResponse()
    }

    /// The item `conversation.item.retrieve` answers with: as it is now, also while the reply
    /// it holds is still being spoken or its audio still being transcribed.
    private func retrievedItem(_ itemID: String, _ content: VoiceSession.ItemContent) -> RealtimeItem {
        let speaks = configuration.speaksResponses
        var item: RealtimeItem
        switch content {
        case .final(let message):
            // An assistant message with tool calls is stored per call: its first item is the one.
            item = RealtimeItem.items(for: message, spoken: speaks).first
                ?? .message(id: itemID, role: .assistant, content: [], status: .completed)
        case .replyInProgress(let text):
            let part: RealtimeContentPart = speaks ? .outputAudio(audio: nil, transcript: text) : .outputText(text)
            item = .message(id: itemID, role: .assistant, content: [part], status: .inProgress)
        case .inputWithoutTranscript:
            item = .message(id: itemID, role: .user, content: [.inputAudio(audio: nil, transcript: nil)], status: .completed)
        }
        item.id = itemID
        return item
    }

    // MARK: Session → client

    /// Sends one session event to the client, after storing and counting what it completes.
    private func forward(_ event: VoiceSessionEvent) {
        observe(event)
        tracer?.observe(event)
        if let turn = console.observe(event, configuration: configuration) { items.save(turn) }
        for piece in pieces(of: event) {
            for serverEvent in translator.translate(piece) {
                // Speech the transport carries itself does not go out as base64 events too.
                if !transport.sendsAudioEvents, case .responseOutputAudioDelta = serverEvent { continue }
                send(serverEvent)
            }
        }
        perform(transport.observe(event, interruptsOnSpeech: configuration.turnDetection?.interruptResponse ?? false))
    }

    /// The event as the client gets it: speech longer than the transport takes at once in
    /// pieces (so a paced transport can hold it back), every other event as it is.
    private func pieces(of event: VoiceSessionEvent) -> [VoiceSessionEvent] {
        guard case .agentAudio(let responseID, let itemID, let samples) = event, let maximumMs = transport.audioEventMaximumMs else { return [event] }
        let pieceLength = RealtimeSessionSettings.supportedAudioRate * maximumMs / 1_000
        guard samples.count > pieceLength else { return [event] }
        return stride(from: 0, to: samples.count, by: pieceLength).map { start in
            .agentAudio(responseID: responseID, itemID: itemID, samples: Array(samples[start..<min(start + pieceLength, samples.count)]))
        }
    }

    /// Carries out what the transport asks after an event.
    private func perform(_ actions: [RealtimeTransportAction]) {
        for action in actions {
            switch action {
            case .send(let event):
                send(event)
            case .truncate(let itemID, let audioEndMs):
                // This actor runs on the session's executor (see `unownedExecutor`).
                session.assumeIsolated { _ = $0.truncate(itemID: itemID, audioEndMs: audioEndMs) }
            }
        }
    }

    /// Stores completed items and keeps metrics and the instance status up to date.
    private func observe(_ event: VoiceSessionEvent) {
        switch event {
        case .itemCompleted(let itemID, let message):
            eventsAwaitingWrites.append([])
            items.append(ItemRecord(id: itemID, conversationID: conversationID, message: message, createdAt: Date(), agentID: agentID)) { [self] in
                await writeDone()
            }
        case .itemDeleted(let itemID):
            eventsAwaitingWrites.append([])
            items.delete(itemID: itemID) { [self] in await writeDone() }
        case .inputCommitted, .inputCleared:
            reportedFullInputBuffer = false
        case .responseStarted:
            setStatus("thinking")
        case .agentAudio:
            setStatus("speaking")
        case .responseDone(let responseID, let status, let error, _):
            lastResponseWasCancelled = status == .cancelled
            if status == .cancelled {
                cancelledResponseIDs.append(responseID)
                if cancelledResponseIDs.count > 16 { cancelledResponseIDs.removeFirst() }
            }
            setStatus("listening")
            context.metrics.turnFinished()
            if let category = error?.category { context.metrics.errorReported(category: category.rawValue) }
            context.log.log("response.done", session: sessionID, ["response": .string(responseID), "status": .string(status.rawValue)])
        case .agentHandoff(let report):
            if let configuration = report.configuration { becomeAgent(report.toAgent, configuration: configuration) }
        case .error(let error):
            context.metrics.errorReported(category: error.category?.rawValue ?? "invalid_request")
        case .turnMetrics(let metrics):
            if let value = metrics.transcriptionMs { context.metrics.observe(stage: "transcription", milliseconds: value) }
            if let value = metrics.firstTokenMs { context.metrics.observe(stage: "first_token", milliseconds: value) }
            if let value = metrics.firstAudioMs { context.metrics.observe(stage: "first_audio", milliseconds: value) }
        default:
            break
        }
    }

    /// The session went on as agent `id` (a handoff): its settings, MCP servers and instance
    /// record follow, and the client hears of it in `session.updated`.
    private func becomeAgent(_ id: String, configuration newConfiguration: VoiceSessionConfiguration) {
        agentID = id
        configuration = newConfiguration
        translator.speaksResponses = configuration.speaksResponses
        if let target = handoffs?.definition(of: id) {
            tracer?.model = AgentSessionProfile(agent: target, settings: context.settings).modelName
            if target.mcpServerConfigurations != agentMCPServers {
                agentMCPServers = target.mcpServerConfigurations
                useAgentAndSessionMCPServers()
            }
        }
        if let instanceID {
            Task { [store = context.store, log = context.log, sessionID] in
                do {
                    try await store.setInstanceAgent(id: instanceID, agentID: id)
                } catch {
                    log.log("store.failed", session: sessionID, ["instance": .string(instanceID), "problem": .string("\(error)")])
                }
            }
        }
        send(.sessionUpdated(sessionInfo))
    }

    /// Connects the session to the agent's MCP servers and its own (which win a shared label).
    private func useAgentAndSessionMCPServers() {
        let labels = Set(sessionMCPServers.map(\.label))
        useMCPServers(
            agentMCPServers.filter { !labels.contains($0.label) }.map { MCPToolbox.Server(configuration: $0) }
                + sessionMCPServers.map { MCPToolbox.Server(configuration: $0, outboundPolicy: sessionMCPServerPolicy) }
        )
    }

    private func setStatus(_ status: String) {
        guard let instanceID else { return }
        context.sessions.setStatus(status, instanceID: instanceID)
    }

    func reportError(_ error: RealtimeProtocolError) {
        context.metrics.errorReported(category: "invalid_request")
        send(.error(error))
    }

    /// Sends `event` now, or after the store writes under way.
    func send(_ event: RealtimeServerEvent) {
        if case .parley = event, !sendsParleyEvents { return }
        guard let text = event.encode(dialect: dialect) else { return }
        var audioMs = 0.0
        if case .responseOutputAudioDelta(_, let delta) = event { audioMs = translator.outputAudio.format.milliseconds(ofBase64: delta) }
        send(OutputPacing.Message(text: text, audioMs: audioMs, followsSpeech: event.followsSpeech))
    }

    /// Sends an encoded event now, or after the store writes under way.
    private func send(_ message: OutputPacing.Message) {
        if eventsAwaitingWrites.isEmpty {
            write(message)
        } else {
            eventsAwaitingWrites[eventsAwaitingWrites.count - 1].append(message)
        }
    }

    /// Writes `event` now, ahead of events waiting for a store write and of held speech.
    private func writeAtOnce(_ event: RealtimeServerEvent) {
        guard let text = event.encode(dialect: dialect) else { return }
        write(OutputPacing.Message(text: text, audioMs: 0, followsSpeech: false))
    }

    private func write(_ message: OutputPacing.Message) {
        for sideband in sidebands { try? sideband.send(.text(message.text)) }
        do {
            try transport.send(message)
        } catch {
            // The socket is closed or the client stopped reading (it is being closed with 1008);
            // the incoming loop ends and closes the session.
        }
    }

    /// The oldest store write under way is done: the events that waited for it go out.
    private func writeDone() {
        guard !eventsAwaitingWrites.isEmpty else { return }
        for message in eventsAwaitingWrites.removeFirst() { write(message) }
    }

    /// Says an item could not be stored. A superseded session ends now rather than talk on unsaved.
    private func storeFailed(_ item: ItemRecord, _ failure: OrderedItemWriter.Failure) {
        switch failure {
        case .superseded:
            context.log.log("session.superseded", session: sessionID, ["item": .string(item.id)])
            end(with: SessionAdmission.supersededError, reason: "session superseded")
        case .storeFailed:
            context.log.log("store.failed", session: sessionID, ["item": .string(item.id)])
            context.metrics.errorReported(category: "invalid_request")
            let failure = RealtimeServerEvent.error(RealtimeProtocolError(type: "server_error", code: "storage_error", message: "The conversation could not be saved."))
            writeAtOnce(failure)
        }
    }
}
