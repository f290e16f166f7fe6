import Foundation

// The responses: asked for, started, fed by their runners and ended. `ResponseLifecycle`
// decides; the session carries out its actions and runs each response in a task of its own.
extension VoiceSession {
    /// Whether a response is in progress.
    public var hasActiveResponse: Bool { responses.current != nil || transcriptions.waitingResponse != nil }

    /// Out-of-band responses running now (they run beside the conversation's).
    public var outOfBandResponsesInFlight: Int { responses.outOfBandIDs.count }

    /// Starts a response to the conversation so far, cancelling one in progress (an
    /// out-of-band request runs beside it instead).
    /// - Returns: the response id.
    @discardableResult
    public func createResponse(_ request: ResponseRequest = ResponseRequest()) -> String {
        let responseID = IdentifierGenerator.make("resp")
        // A closed session starts nothing.
        guard !isClosed else { return responseID }
        if request.isOutOfBand {
            startOutOfBandResponse(id: responseID, request: request)
            return responseID
        }
        // A response asked for right after a commit must hear what was said: it waits for the
        // committed audio's transcript.
        if transcriptions.holdResponse(id: responseID, request: request) { return responseID }
        startResponse(id: responseID, trigger: clock.now, transcriptionMs: nil, recognizedSeconds: nil, request: request)
        return responseID
    }

    /// Cancels a response: the given one, or the conversation's response in progress. The
    /// stored reply keeps what was sent.
    /// - Returns: whether a response was in progress to cancel.
    @discardableResult
    public func cancelResponse(id responseID: String? = nil) -> Bool {
        if let responseID, responses.isOutOfBand(responseID) {
            finishResponse(responseID, status: .cancelled)
            return true
        }
        if transcriptions.dropWaitingResponse(id: responseID) { return true }
        guard let active = responses.current, responseID == nil || responseID == active.id else { return false }
        finishResponse(active.id, status: .cancelled)
        return true
    }

    /// Starts response `responseID` as the conversation's, cancelling one in progress (its
    /// stored reply keeps what was sent); its latency counts from `trigger`. A response that
    /// `continuesHandoff` (the agent taking over answers) is part of the turn before it.
    func startResponse(
        id responseID: String = IdentifierGenerator.make("resp"), trigger: Duration, transcriptionMs: Double?,
        recognizedSeconds: Double?, request: ResponseRequest, continuesHandoff: Bool = false
    ) {
        if let active = responses.current {
            finishResponse(active.id, status: .cancelled, heardMs: active.playback.sentMilliseconds)
        }
        if !continuesHandoff { providers.handoffs?.turnBegan() }
        begin(responseID: responseID, request: request, trigger: trigger, transcriptionMs: transcriptionMs, recognizedSeconds: recognizedSeconds)
        let runner = makeRunner(responseID: responseID, history: conversationForModel, request: request, runsApprovedCalls: true)
        run(runner, as: responseID)
    }

    /// Starts a response that adds nothing to the conversation and runs beside its response.
    private func startOutOfBandResponse(id responseID: String, request: ResponseRequest) {
        begin(responseID: responseID, request: request, trigger: clock.now, transcriptionMs: nil, recognizedSeconds: nil)
        run(makeRunner(responseID: responseID, history: request.input ?? conversationForModel, request: request), as: responseID)
    }

    /// Makes `responseID` a response in progress (the conversation's, unless the request is
    /// out of band) and announces it.
    private func begin(responseID: String, request: ResponseRequest, trigger: Duration, transcriptionMs: Double?, recognizedSeconds: Double?) {
        let response = responses.makeResponse(
            id: responseID, request: request, trigger: trigger, transcriptionMs: transcriptionMs, recognizedSeconds: recognizedSeconds,
            speaks: request.speaks ?? configuration.speaksResponses
        )
        carryOut(responses.begin(response, request: request))
    }

    /// Runs response `responseID` in a task of the session, which hands its events to `receive`.
    private func run(_ runner: ResponseRunner, as responseID: String) {
        let task = tasks.start { [weak self] in
            await runner.run { [weak self] event in await self?.receive(event, from: responseID) ?? false }
        }
        responses.attach(task, to: responseID)
    }

    /// Makes a response started before the turn ended the turn's response: what it already
    /// said goes out now, the rest as it comes.
    func adopt(_ speculative: SpeculativeResponse, trigger: Duration, transcriptionMs: Double, recognizedSeconds: Double?) {
        begin(
            responseID: speculative.id, request: ResponseRequest(), trigger: trigger, transcriptionMs: transcriptionMs,
            recognizedSeconds: recognizedSeconds
        )
        responses.attach(speculative.task, to: speculative.id)
        for held in speculative.held {
            guard receive(held.event, from: speculative.id, at: held.at) else { return }
        }
    }

    /// The runner of a response to `history`, with the session's agent settings and the
    /// request's overrides.
    /// `runsApprovedCalls`: the response is the conversation's next one, which runs the calls
    /// the client approved since the last. `turnLanguage`: the language of a turn answered before
    /// its final transcript counts it (`CallerLanguage.hearing`).
    func makeRunner(
        responseID: String, history: [ChatMessage], request: ResponseRequest, runsApprovedCalls: Bool = false, turnLanguage: String? = nil
    ) -> ResponseRunner {
        let language = callerLanguage.hearing(turnLanguage).current(configured: configuration.transcription.language)
        return ResponseRunner(
            responseID: responseID, history: history, request: request, configuration: configuration, providers: agentProviders,
            sessionTools: sessionTools, approvedCalls: runsApprovedCalls ? sessionTools.takeApprovedCalls() : nil,
            outputSampleRate: outputSampleRate, callerLanguage: language,
            keepInterruptedResult: { [weak self] call, result in await self?.keepToolResult(result, of: call) }
        )
    }

    /// Takes one event from the response runner; returns `false` when the response is over
    /// and the runner should stop.
    /// `at` is when the runner produced the event (earlier than now for held events).
    func receive(_ event: ResponseRunner.Event, from responseID: String, at time: Duration? = nil) -> Bool {
        let delivery = responses.receive(event, from: responseID, at: time ?? clock.now, inputMs: input.receivedMs, ledger: &ledger)
        carryOut(delivery.actions)
        if case .toolCallFinished = event { reportRefusedHandoffs() }
        return delivery.goesOn
    }

    /// Ends the response exactly once: stores what was heard, reports, and cancels its task.
    func finishResponse(_ responseID: String, status: ResponseStatus, heardMs: Int? = nil) {
        carryOut(responses.finish(responseID, status: status, heardMs: heardMs, ledger: &ledger))
    }

    /// Carries out what the response lifecycle decided; a handoff the response's transfer tool
    /// prepared is carried out once the response has ended.
    func carryOut(_ actions: [ResponseLifecycle.Action]) {
        var ended: ResponseStatus?
        defer { if let ended { handOverIfAsked(afterResponseEnded: ended) } }
        for action in actions {
            switch action {
            case .emit(let event):
                if case .responseDone(_, let status, _, _) = event { ended = status }
                emit(event)
            case .play(let samples, let itemID):
                if input.cancelsEcho { recordPlayed(samples) }
                providers.recorder?.recordAgent(samples, sampleRate: outputSampleRate, itemID: itemID)
            case .cutRecording(let itemID, let milliseconds):
                providers.recorder?.cutAgent(itemID: itemID, afterMilliseconds: milliseconds)
            case .armIdleTimeout(let audioEndMs):
                input.armIdleTimeout(atMs: max(input.receivedMs, audioEndMs))
            }
        }
    }

    /// Hands the echo canceller the output audio the client starts playing now.
    private func recordPlayed(_ samples: [Int16]) {
        if echoReferenceResampler == nil { echoReferenceResampler = providers.makeResampler(outputSampleRate, input.rate) }
        let floats = SampleConversion.float(samples)
        input.played(outputSampleRate == input.rate ? floats : echoReferenceResampler?.process(floats) ?? [])
    }

    /// The user said nothing for the idle timeout after the agent's last reply: the silent
    /// audio becomes an (empty) user turn, and the agent, when it answers turns by itself,
    /// prompts the user to go on.
    func idleTimeoutTriggered(audioStartMs: Int, audioEndMs: Int) {
        guard responses.current == nil, transcriptions.waitingResponse == nil else { return }
        let itemID = IdentifierGenerator.make("item")
        emit(.idleTimeout(itemID: itemID, audioStartMs: audioStartMs, audioEndMs: audioEndMs))
        let previous = ledger.lastItemID
        ledger.reserve(id: itemID)
        emit(.inputCommitted(itemID: itemID, previousItemID: previous))
        guard configuration.turnDetection?.createResponse == true else { return }
        let seconds = max(1, (audioEndMs - audioStartMs) / 1000)
        var request = ResponseRequest()
        request.instructions = configuration.instructions
            + "\n\nThe user has said nothing for \(seconds) seconds. Briefly check whether they are still there or want to go on."
        startResponse(trigger: clock.now, transcriptionMs: nil, recognizedSeconds: nil, request: request)
    }
}
