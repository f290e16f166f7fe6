import Foundation

/// The owner of one conversation: turns incoming audio and text into spoken answers.
///
/// Audio goes in at any sample rate and is resampled once to what the VAD and recognizer
/// need; the turn detector (server VAD) or the client (manual commits) ends a turn; the final
/// transcript goes to the agent; the agent's text is cut into sentences, each synthesised as
/// soon as it is complete, so the first audio leaves while the model is still writing. User
/// speech over the agent cancels the whole response chain at once and keeps only what the
/// listener heard. Everything the session says comes out of `events`, in order.
///
/// ```swift
/// let session = VoiceSession(providers: providers, configuration: VoiceSessionConfiguration())
/// Task { for await event in session.events { send(event) } }
/// try await session.appendAudio(samples, sampleRate: 24_000)
/// ```
public actor VoiceSession {
    /// What the session says, in order. Ends when the session is closed. Empty once a handler
    /// takes the events (`deliverEvents(to:)`).
    public nonisolated let events: AsyncStream<VoiceSessionEvent>
    private let continuation: AsyncStream<VoiceSessionEvent>.Continuation
    /// Takes each event as it happens, instead of `events`.
    private var eventHandler: (@Sendable (VoiceSessionEvent) -> Void)?

    /// The configuration in use.
    public private(set) var configuration: VoiceSessionConfiguration
    /// The conversation so far (completed items only).
    public private(set) var ledger: ConversationLedger
    /// Latency summaries over the session's turns.
    public var metricsHistory: [TurnMetrics] { responses.metricsHistory }

    private let providers: VoiceSessionProviders
    private let clock: MonotonicClock
    /// Makes the resamplers that convert the session's output to other rates (band-limited).
    public nonisolated var makeOutputResampler: @Sendable (Int, Int) -> any Resampler { providers.makeResampler }

    /// The tools the agent runs itself (the client's tools come with the configuration).
    public nonisolated var serverTools: [ToolDefinition] { providers.tools.definitions }

    /// Whether the session can run `semantic_vad` (its providers include a turn-completion model).
    public nonisolated var judgesTurnCompletion: Bool { providers.turnCompletionModel != nil }

    /// Whether the session can run `noise_reduction` (its providers include a noise suppressor).
    public nonisolated var suppressesNoise: Bool { providers.makeNoiseSuppressor != nil }

    /// Whether the session can cancel its own output from its input (`parley_echo_cancellation`).
    public nonisolated var cancelsEcho: Bool { providers.makeEchoCanceller != nil }

    /// The rate the session's audio output has (24 kHz for the realtime protocol).
    public nonisolated let outputSampleRate: Int

    // Input
    private var input: InputPipeline
    private var speechItemID: String?
    /// The passes over the turn in progress for partial transcripts.
    private var partials = PartialTranscripts()
    /// Committed utterances waiting for their transcripts, and the response waiting for them.
    private var transcriptions = TranscriptionQueue()
    /// The turn's transcription and answer started while its silence window still runs.
    private var preemptive = PreemptiveGeneration()

    // Output
    /// The responses in progress, the reply still playing, and what each reply said.
    private var responses: ResponseLifecycle
    /// Speech over the agent: the turn it begins, held until the interruption is decided, and
    /// where the agent's audio was paused.
    private var interruption = InterruptionJudge()
    /// The transcription of the speech over the agent being judged.
    private var interruptionTranscription: Task<Void, Never>?
    /// Converts the output to the input's rate for the echo canceller's reference.
    private var echoReferenceResampler: (any Resampler)?
    /// Every task the session started, until it ends; `close()` cancels and awaits them.
    private let tasks = SessionTasks()
    private var isClosed = false
    /// Server tools of this session only (its MCP servers'), beside the providers' tools.
    var sessionTools = SessionTools()

    /// Creates a session.
    /// - Parameters:
    ///   - providers: the engines.
    ///   - configuration: the initial configuration.
    ///   - history: items of a resumed conversation.
    ///   - outputSampleRate: the sample rate of audio events.
    ///   - clock: where latency figures read the time.
    public init(
        providers: VoiceSessionProviders,
        configuration: VoiceSessionConfiguration,
        history: [ConversationLedger.Item] = [],
        outputSampleRate: Int = AudioFormat.realtime.sampleRate,
        clock: MonotonicClock = .system
    ) {
        (events, continuation) = AsyncStream.makeStream(of: VoiceSessionEvent.self, bufferingPolicy: .unbounded)
        self.providers = providers
        self.configuration = configuration
        self.ledger = ConversationLedger(items: history)
        self.outputSampleRate = outputSampleRate
        self.responses = ResponseLifecycle(outputSampleRate: outputSampleRate)
        self.clock = clock
        self.input = InputPipeline(
            detector: providers.makeVoiceActivityDetector(),
            recognizerRate: providers.recognizer.sampleRate,
            configuration: configuration,
            makeNoiseSuppressor: providers.makeNoiseSuppressor,
            makeEchoCanceller: providers.makeEchoCanceller
        )
        if configuration.turnDetection?.idleTimeoutMs != nil { input.armIdleTimeout(atMs: 0) }
    }

    // MARK: - Input

    /// Adds audio from the user: mono PCM16 at `sampleRate`.
    /// - Throws: `SessionError` `input_audio_buffer_full` when a push-to-talk buffer is full
    ///   (the audio is not added; what was buffered stays).
    public func appendAudio(_ samples: [Int16], sampleRate: Int = AudioFormat.realtime.sampleRate) throws(SessionError) {
        guard !isClosed, !samples.isEmpty else { return }
        guard (8_000...192_000).contains(sampleRate) else {
            throw SessionError(code: "invalid_sample_rate", message: "Audio must be sampled at 8 to 192 kHz (got \(sampleRate) Hz).", parameter: "audio")
        }
        providers.recorder?.recordUser(samples, sampleRate: sampleRate, sentOnlyWhileTalking: configuration.turnDetection == nil)
        let converted = input.resample(samples, from: sampleRate, using: providers.makeInputResampler)
        if configuration.turnDetection == nil {
            guard input.buffer(converted) else {
                throw SessionError(
                    code: "input_audio_buffer_full",
                    message: "The input audio buffer holds at most \(configuration.maximumInputBufferMs / 1000) s; commit or clear it.",
                    parameter: "audio"
                )
            }
            refreshPartialIfDue(utterance: { $0.manualBuffer }, itemID: nil)
            return
        }
        for frame in input.frames(from: converted) {
            handle(frame: frame)
            followSilence(atMs: frame.endMs)
        }
        let endedEarly = input.detectTurnEndInPartialFrame()
        if !endedEarly.isEmpty { handle(turnActions: endedEarly, atMs: input.receivedMs) }
        followSilence(atMs: input.receivedMs)
    }

    /// Starts the turn's transcription once its silence is long enough, or drops one the
    /// user talked over (with the response started on it).
    private func followSilence(atMs nowMs: Int) {
        // Speech over the agent is not a turn until it is judged to interrupt.
        guard !interruption.isHoldingTurn else { return }
        let recognizer = providers.recognizer
        let started = preemptive.follow(
            silenceStartedAtMs: input.silenceStartedAtMs, nowMs: nowMs, delayMs: configuration.preemptiveTranscriptionAfterMs,
            turn: { input.turnInProgress },
            transcribe: { samples in tasks.start { try await recognizer.transcribe(samples, isFinal: true) } }
        )
        guard let started else { return }
        // The whole turn is being transcribed: a partial pass still running only competes for the CPU.
        partials.cancel()
        guard mayGeneratePreemptively else { return }
        let generation = preemptive.generation
        tasks.start { [weak self] in
            guard let transcription = try? await started.value else { return }
            await self?.startSpeculativeResponse(answering: transcription, generation: generation)
        }
    }

    private var mayGeneratePreemptively: Bool {
        SpeculativeResponse.isAllowed(by: configuration, serverTools: providers.tools)
    }

    /// Drops the early transcription and the response started on it.
    private func dropPreemptiveWork() {
        preemptive.cancel()
    }

    /// Commits the buffered audio as a user turn (manual mode; in server VAD mode it commits
    /// whatever the turn in progress holds).
    /// - Throws: `SessionError` `input_audio_buffer_commit_empty` when less than 100 ms is buffered;
    ///   nothing is committed and no turn starts.
    public func commitAudio(createResponse: Bool = false) throws(SessionError) {
        guard !isClosed else { return }
        dropPreemptiveWork()
        let samples = configuration.turnDetection == nil ? input.takeManualBuffer() : input.takeTurnInProgress()
        guard samples.count >= providers.recognizer.sampleRate / 10 else {
            throw SessionError(
                code: "input_audio_buffer_commit_empty",
                message: "Nothing to commit: the input audio buffer holds less than 100 ms of audio.",
                parameter: "audio"
            )
        }
        commit(samples: samples, itemID: speechItemID ?? IdentifierGenerator.make("item"), createsResponse: createResponse)
    }

    /// Whether a response is in progress.
    public var hasActiveResponse: Bool { responses.current != nil || transcriptions.waitingResponse != nil }

    /// Drops the buffered input audio.
    public func clearAudio() {
        guard !isClosed else { return }
        input.clear()
        interruption.discardHeldTurn()
        partials.cancel()
        dropPreemptiveWork()
        speechItemID = nil
        emit(.inputCleared)
    }

    /// Where a new item goes.
    public enum ItemPlacement: Sendable, Hashable {
        /// After the last item.
        case end
        /// Before every other item (`previous_item_id: "root"`).
        case start
        /// Right after the item with this id.
        case after(String)
    }

    /// Adds a typed user message (or any other message) to the conversation.
    /// - Returns: the new item's id.
    @discardableResult
    public func addItem(_ message: ChatMessage, id: String? = nil, placement: ItemPlacement = .end) -> String {
        let itemID = id ?? IdentifierGenerator.make("item")
        switch placement {
        case .end: ledger.upsert(id: itemID, message: message)
        case .start: ledger.insertAtStart(id: itemID, message: message)
        case .after(let previousID): ledger.insert(id: itemID, message: message, after: previousID)
        }
        let previous = ledger.previousItemID(before: itemID)
        emit(.itemAdded(itemID: itemID, previousItemID: previous, message: message))
        emit(.itemCompleted(itemID: itemID, message: message))
        return itemID
    }

    /// What an item of the conversation holds right now.
    public enum ItemContent: Sendable, Hashable {
        /// The item's final message.
        case final(ChatMessage)
        /// The reply being written or spoken, with its text so far.
        case replyInProgress(text: String)
        /// Committed audio whose transcript is not known yet (or that transcribed to nothing).
        case inputWithoutTranscript
    }

    /// What the item `id` holds, `nil` when the conversation has no such item.
    public func content(ofItem id: String) -> ItemContent? {
        if let message = ledger.message(id: id) { return .final(message) }
        guard ledger.contains(id: id) else { return nil }
        if let text = responses.textInProgress(ofItem: id) { return .replyInProgress(text: text) }
        return .inputWithoutTranscript
    }

    /// Removes an item from the conversation.
    /// - Returns: whether the item existed.
    @discardableResult
    public func deleteItem(id: String) -> Bool {
        guard ledger.remove(id: id) else { return false }
        emit(.itemDeleted(itemID: id))
        return true
    }

    /// Replaces the configuration; takes effect from the next frame and the next response.
    public func update(configuration newConfiguration: VoiceSessionConfiguration) {
        let switchedMode = (configuration.turnDetection == nil) != (newConfiguration.turnDetection == nil)
        let armsIdleTimer = newConfiguration.turnDetection?.idleTimeoutMs != nil
            && newConfiguration.turnDetection?.idleTimeoutMs != configuration.turnDetection?.idleTimeoutMs
        configuration = newConfiguration
        input.apply(newConfiguration)
        if armsIdleTimer { input.armIdleTimeout(atMs: input.receivedMs) }
        if switchedMode {
            input.clear()
            dropPreemptiveWork()
        }
    }

    // MARK: - Responses

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

    /// Cuts an assistant item to what the listener heard: `audioEndMs` of its audio.
    /// - Returns: `false` when the item is unknown or not an assistant message.
    @discardableResult
    public func truncate(itemID: String, audioEndMs: Int) -> Bool {
        providers.recorder?.cutAgent(itemID: itemID, afterMilliseconds: audioEndMs)
        guard let actions = responses.truncate(itemID: itemID, audioEndMs: audioEndMs, ledger: &ledger) else { return false }
        carryOut(actions)
        return true
    }

    /// Hands every later event to `handler` the moment it happens, on the session's executor,
    /// instead of queueing it on `events`, until the session is closed. A consumer sharing that
    /// executor handles each event without waiting for a task of its own to be scheduled, which
    /// under load can take longer than the whole turn.
    public func deliverEvents(to handler: @escaping @Sendable (VoiceSessionEvent) -> Void) {
        eventHandler = handler
    }

    /// Ends the session: cancels everything it started, finishes `events`, and returns once
    /// every task it started has ended (a tool that cannot be cancelled runs to its end or
    /// its timeout first).
    public func close() async {
        guard !isClosed else {
            await tasks.cancelAllAndWait()
            return
        }
        if let active = responses.current { finishResponse(active.id, status: .cancelled) }
        for responseID in responses.outOfBandIDs { finishResponse(responseID, status: .cancelled) }
        partials.cancel()
        dropPreemptiveWork()
        interruptionTranscription?.cancel()
        transcriptions.removeAll()
        isClosed = true
        providers.recorder?.finish()
        continuation.finish()
        // The handler's owner usually holds the session: letting go ends that cycle.
        eventHandler = nil
        await tasks.cancelAllAndWait()
    }

    /// p50/p95 of end of speech → first audio over the session's turns.
    public var firstAudioSummary: LatencySummary? { LatencySummary(metricsHistory.compactMap(\.firstAudioMs)) }

    /// Whether a response to a turn still in its silence window is being prepared.
    var isAnsweringEarly: Bool { preemptive.answer != nil }

    /// Whether the response prepared during the silence window has said all it will say.
    var earlyAnswerIsComplete: Bool {
        preemptive.answer?.held.contains { held in
            if case .finished = held.event { true } else { false }
        } ?? false
    }

    /// Whether any task of the session is still running (for leak checks): a task counts from
    /// its start until it has returned.
    public var hasRunningTasks: Bool { !tasks.isEmpty }

    // MARK: - Turn detection

    private func handle(frame: InputPipeline.Frame) {
        if configuration.turnDetection?.interruptResponse == true {
            let decision = input.interruption(frame, activity: responses.agentActivity(atInputMs: frame.endMs))
            carryOut(interruption.respond(to: decision, atMs: frame.endMs), atMs: frame.endMs)
        }
        handle(turnActions: input.detectTurns(frame), atMs: frame.endMs)
    }

    /// Announces turns the detector started or ended, and commits ended ones; while speech
    /// over the agent is being judged, holds them until the verdict.
    private func handle(turnActions newActions: [TurnDetector.Action], atMs nowMs: Int) {
        let holding = configuration.turnDetection?.interruptResponse == true
            && (input.isDecidingInterruption || responses.agentActivity(atInputMs: nowMs) != .idle)
        process(turnActions: interruption.admit(newActions, holding: holding, deciding: input.isDecidingInterruption), atMs: nowMs)
    }

    private func process(turnActions: [TurnDetector.Action], atMs nowMs: Int) {
        for action in turnActions {
            switch action {
            case .speechStarted(let startMs):
                let itemID = IdentifierGenerator.make("item")
                speechItemID = itemID
                partials.turnStarted(atMs: nowMs)
                emit(.speechStarted(itemID: itemID, audioStartMs: startMs))
            case .speechStopped(let endMs):
                emit(.speechStopped(itemID: speechItemID ?? IdentifierGenerator.make("item"), audioEndMs: endMs))
            case .commit(let utterance):
                let itemID = speechItemID ?? IdentifierGenerator.make("item")
                // The early transcription heard the whole turn unless speech forced this commit.
                let early = preemptive.turnEnded(reachedMaximumLength: utterance.reachedMaximumLength)
                commit(
                    samples: utterance.samples, itemID: itemID, createsResponse: configuration.turnDetection?.createResponse ?? false,
                    preemptive: early?.transcription, finished: early?.result
                )
            case .idleTimeout(let startMs, let endMs):
                idleTimeoutTriggered(audioStartMs: startMs, audioEndMs: endMs)
            case .judgeCompletion(let samples, let atMs):
                judgeCompletion(of: samples, atMs: atMs, itemID: speechItemID ?? IdentifierGenerator.make("item"))
            }
        }
        // Once the user pauses, the turn's own transcription is about to start (or the turn to
        // end): a partial pass started now would only compete with it for the CPU.
        if let itemID = speechItemID, input.silenceStartedAtMs == nil {
            refreshPartialIfDue(utterance: { $0.turnInProgress }, itemID: itemID, nowMs: nowMs)
        }
    }

    /// Asks the turn-completion model about the pause at `atMs`, off the session's executor
    /// and the concurrency pool; audio goes on being handled meanwhile. Without a model the
    /// pause waits for the check's maximum silence (a session is refused `semantic_vad`
    /// before it gets here).
    private func judgeCompletion(of samples: [Float], atMs: Int, itemID: String) {
        guard let model = providers.turnCompletionModel else { return }
        let rate = input.rate
        let makeResampler = providers.makeInputResampler
        tasks.start { [weak self] in
            guard let probability = await TurnCompletionQueue.completionProbability(
                of: samples, at: rate, by: model, makeResampler: makeResampler
            ) else { return }
            await self?.completionJudged(probability: probability, atMs: atMs, itemID: itemID)
        }
    }

    /// Takes the audio model's verdict and, when the pause's early transcript is under way,
    /// reads the pause's words too (the reply waits for that transcript anyway) before acting
    /// on it (`PauseVerdict`).
    private func completionJudged(probability: Float, atMs: Int, itemID: String) {
        guard !isClosed else { return }
        guard let early = preemptive.runningTranscription else {
            pauseJudged(probability: probability, atMs: atMs, itemID: itemID, words: nil)
            return
        }
        let audioSaysComplete = input.completionWouldEndTurn(probability: probability)
        let judge = providers.turnCompletionJudge
        tasks.start { [weak self] in
            let words = await PauseWords.read(early, audioSaysComplete: audioSaysComplete, judge: judge)
            await self?.pauseJudged(probability: probability, atMs: atMs, itemID: itemID, words: words)
        }
    }

    /// Acts on a pause's verdicts: the audio model's `probability` and, when they were read,
    /// the pause's `words`.
    private func pauseJudged(probability: Float, atMs: Int, itemID: String, words: PauseWords?) {
        guard !isClosed else { return }
        var actions: [TurnDetector.Action] = []
        switch PauseVerdict(audioSaysComplete: input.completionWouldEndTurn(probability: probability), words: words) {
        case .endTurn: actions = input.completionJudged(probability: probability, atMs: atMs)
        case .shortenWait: input.wordsJudgedComplete(atMs: atMs)
        case .keepWaiting: break
        }
        emit(.turnJudged(itemID: itemID, audioMs: atMs, probability: probability, endsTurn: !actions.isEmpty, transcript: words?.transcript))
        if !actions.isEmpty { handle(turnActions: actions, atMs: input.receivedMs) }
    }

    /// Hands the echo canceller the output audio the client starts playing now.
    private func recordPlayed(_ samples: [Int16]) {
        if echoReferenceResampler == nil { echoReferenceResampler = providers.makeResampler(outputSampleRate, input.rate) }
        let floats = SampleConversion.float(samples)
        input.played(outputSampleRate == input.rate ? floats : echoReferenceResampler?.process(floats) ?? [])
    }

    // MARK: - Interruptions

    /// Carries out what the interruption judge decided at input time `nowMs`.
    private func carryOut(_ actions: [InterruptionJudge.Action], atMs nowMs: Int) {
        for action in actions {
            switch action {
            case .pauseOutput(let atMs):
                emit(.outputAudioPaused(audioMs: atMs))
            case .transcribe(let startMs, let endMs):
                transcribeSpeechOverAgent(speechStartMs: startMs, speechEndMs: endMs)
            case .announce(let startMs, let atMs, let interrupts, let reason, let words):
                emit(.interruptionDecided(speechStartMs: startMs, audioMs: atMs, interrupts: interrupts, reason: reason, words: words))
            case .resumeOutput(let atMs):
                emit(.outputAudioResumed(audioMs: atMs))
            case .startTurn(let turnActions):
                process(turnActions: turnActions, atMs: nowMs)
            case .stopAgent(let stoppedAtMs):
                carryOut(responses.stopAgent(atInputMs: stoppedAtMs, ledger: &ledger))
            case .forgetTurn:
                input.dropTurnInProgress()
                speechItemID = nil
                partials.cancel()
                dropPreemptiveWork()
            }
        }
    }

    /// Transcribes the speech heard over the agent, off the session's executor, and hands the
    /// words to the policy.
    private func transcribeSpeechOverAgent(speechStartMs: Int, speechEndMs: Int) {
        let clip = input.recentAudio(fromMs: speechStartMs - 100, toMs: speechEndMs + 100)
        let recognizer = providers.recognizer
        interruptionTranscription?.cancel()
        interruptionTranscription = tasks.start { [weak self] in
            // A failed transcription heard no words: the agent goes on. A cancelled one (the
            // speech went on and is judged again) says nothing.
            let words = (try? await recognizer.transcribe(clip, isFinal: true, prompt: InterruptionPolicy.recognitionPrompt))
                ?? Transcription(text: "", audioDuration: 0, processingDuration: 0)
            guard !Task.isCancelled else { return }
            await self?.interruptionJudged(words: words, speechStartMs: speechStartMs, speechEndMs: speechEndMs)
        }
    }

    private func interruptionJudged(words: Transcription, speechStartMs: Int, speechEndMs: Int) {
        interruptionTranscription = nil
        guard !isClosed else { return }
        let decision = input.interruptionJudged(words: words, speechStartMs: speechStartMs, speechEndMs: speechEndMs)
        carryOut(interruption.respond(to: decision, atMs: input.receivedMs, words: words.text), atMs: input.receivedMs)
    }

    private func commit(
        samples: [Float], itemID: String, createsResponse: Bool, preemptive: Task<Transcription, any Error>? = nil, finished: Transcription? = nil
    ) {
        speechItemID = nil
        partials.drop()
        let previous = ledger.lastItemID
        ledger.reserve(id: itemID)
        emit(.inputCommitted(itemID: itemID, previousItemID: previous))
        transcriptions.add(TranscriptionQueue.Utterance(
            itemID: itemID, samples: samples, committedAt: clock.now, createsResponse: createsResponse, preemptive: preemptive,
            finished: finished
        ))
        transcribeNext()
    }

    // MARK: - Transcription

    /// Carries out what the transcription queue asks for until it waits for a transcript.
    private func transcribeNext() {
        while let action = transcriptions.next() {
            switch action {
            case .transcribe(let utterance):
                startTranscribing(utterance)
            case .takeTranscript(let utterance, let transcription):
                // The turn was transcribed (and answered) during its silence window.
                transcriptionFinished(utterance, result: .success(transcription))
            case .startResponse(let waiting, let committedAt):
                startResponse(
                    id: waiting.id, trigger: committedAt, transcriptionMs: clock.millisecondsSince(committedAt),
                    recognizedSeconds: nil, request: waiting.request
                )
            }
        }
    }

    private func startTranscribing(_ utterance: TranscriptionQueue.Utterance) {
        let recognizer = providers.recognizer
        tasks.start { [weak self] in
            let result: Result<Transcription, any Error>
            do {
                if let preemptive = utterance.preemptive {
                    result = .success(try await withTaskCancellationHandler { try await preemptive.value } onCancel: { preemptive.cancel() })
                } else {
                    result = .success(try await recognizer.transcribe(utterance.samples, isFinal: true))
                }
            } catch {
                result = .failure(error)
            }
            await self?.transcriptionArrived(utterance, result: result)
        }
    }

    private func transcriptionArrived(_ utterance: TranscriptionQueue.Utterance, result: Result<Transcription, any Error>) {
        transcriptionFinished(utterance, result: result)
        transcribeNext()
    }

    private func transcriptionFinished(_ utterance: TranscriptionQueue.Utterance, result: Result<Transcription, any Error>) {
        transcriptions.finished(utterance)
        guard !isClosed else { return }
        let previousItemID = ledger.previousItemID(before: utterance.itemID)
        // A response started before the turn ended either becomes this turn's response or goes.
        defer { preemptive.dropEndedTurnsAnswer() }
        switch result {
        case .failure(let error):
            if error is CancellationError { return }
            let sessionError = SessionError.provider(error, stage: "transcription")
            emit(.userTranscriptFailed(itemID: utterance.itemID, error: sessionError))
            emit(.error(sessionError))
        case .success(let transcription):
            let text = transcription.text.trimmingCharacters(in: .whitespacesAndNewlines)
            emit(.userTranscriptFinal(itemID: utterance.itemID, text: text))
            // A turn that transcribes to nothing (a cough, a false interruption) is no turn.
            guard !text.isEmpty else { return }
            let message = ChatMessage.user(text)
            ledger.upsert(id: utterance.itemID, message: message)
            emit(.itemCompleted(itemID: utterance.itemID, message: message))
            guard utterance.createsResponse else { return }
            let transcriptionMs = clock.millisecondsSince(utterance.committedAt)
            if responses.current == nil, let answer = preemptive.takeAnswer(to: text, after: previousItemID) {
                adopt(answer, trigger: utterance.committedAt, transcriptionMs: transcriptionMs, recognizedSeconds: transcription.audioDuration)
            } else {
                startResponse(
                    trigger: utterance.committedAt, transcriptionMs: transcriptionMs,
                    recognizedSeconds: transcription.audioDuration, request: ResponseRequest()
                )
            }
        }
    }

    private func refreshPartialIfDue(utterance: (InputPipeline) -> [Float], itemID: String?, nowMs: Int? = nil) {
        guard providers.recognizer.supportsPartials, !preemptive.isTranscribing,
              partials.isDue(atMs: nowMs ?? input.manualBufferMs, intervalMs: configuration.partialTranscriptIntervalMs) else { return }
        let samples = utterance(input)
        guard samples.count >= providers.recognizer.sampleRate / 4 else { return }
        let partialItemID = itemID ?? speechItemID ?? IdentifierGenerator.make("item")
        speechItemID = partialItemID
        let recognizer = providers.recognizer
        partials.started(tasks.start { [weak self] in
            let transcription = try? await recognizer.transcribe(samples, isFinal: false)
            await self?.partialFinished(itemID: partialItemID, text: transcription?.text)
        })
    }

    private func partialFinished(itemID: String, text: String?) {
        partials.passEnded()
        guard !isClosed, speechItemID == itemID, let text, !text.isEmpty else { return }
        emit(.userTranscriptPartial(itemID: itemID, text: text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    // MARK: - Response lifecycle

    @discardableResult
    private func startResponse(
        id responseID: String = IdentifierGenerator.make("resp"), trigger: Duration, transcriptionMs: Double?,
        recognizedSeconds: Double?, request: ResponseRequest
    ) -> String {
        if let active = responses.current {
            finishResponse(active.id, status: .cancelled, heardMs: active.playback.sentMilliseconds)
        }
        begin(responseID: responseID, request: request, trigger: trigger, transcriptionMs: transcriptionMs, recognizedSeconds: recognizedSeconds)
        let runner = makeRunner(responseID: responseID, history: ledger.messages, request: request, runsApprovedCalls: true)
        run(runner, as: responseID)
        return responseID
    }

    /// Starts a response that adds nothing to the conversation and runs beside its response.
    private func startOutOfBandResponse(id responseID: String, request: ResponseRequest) {
        begin(responseID: responseID, request: request, trigger: clock.now, transcriptionMs: nil, recognizedSeconds: nil)
        run(makeRunner(responseID: responseID, history: request.input ?? ledger.messages, request: request), as: responseID)
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

    /// The runner of a response to `history`, with the session's agent settings and the
    /// request's overrides.
    /// `runsApprovedCalls`: the response is the conversation's next one, which runs the calls
    /// the client approved since the last.
    private func makeRunner(responseID: String, history: [ChatMessage], request: ResponseRequest, runsApprovedCalls: Bool = false) -> ResponseRunner {
        ResponseRunner(
            responseID: responseID, history: history, request: request, configuration: configuration, providers: providers,
            sessionTools: sessionTools, approvedCalls: runsApprovedCalls ? sessionTools.takeApprovedCalls() : nil,
            outputSampleRate: outputSampleRate,
            keepInterruptedResult: { [weak self] call, result in await self?.keepToolResult(result, of: call) }
        )
    }

    // MARK: - Preemptive generation

    /// Starts answering the early transcript of a turn still in its silence window, when that
    /// transcription is still the one wanted and nothing else is under way.
    private func startSpeculativeResponse(answering transcription: Transcription, generation: Int) {
        let text = transcription.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !isClosed, !text.isEmpty, mayGeneratePreemptively, preemptive.mayAnswer(generation: generation),
              responses.current == nil, transcriptions.isIdle, transcriptions.waitingResponse == nil else { return }
        let responseID = IdentifierGenerator.make("resp")
        let runner = makeRunner(responseID: responseID, history: ledger.messages + [.user(text)], request: ResponseRequest())
        let task = tasks.start { [weak self] in
            await runner.run { [weak self] event in await self?.receiveSpeculative(event, from: responseID) ?? false }
        }
        preemptive.answering(SpeculativeResponse(
            id: responseID, generation: generation, transcription: transcription, transcript: text, lastItemID: ledger.lastItemID, task: task
        ))
    }

    /// Holds an event of a response whose turn has not ended, or passes it on once adopted.
    private func receiveSpeculative(_ event: ResponseRunner.Event, from responseID: String) -> Bool {
        if responses.current?.id == responseID { return receive(event, from: responseID) }
        return preemptive.hold(event, from: responseID, at: clock.now)
    }

    /// Makes a response started before the turn ended the turn's response: what it already
    /// said goes out now, the rest as it comes.
    private func adopt(_ speculative: SpeculativeResponse, trigger: Duration, transcriptionMs: Double, recognizedSeconds: Double?) {
        begin(
            responseID: speculative.id, request: ResponseRequest(), trigger: trigger, transcriptionMs: transcriptionMs,
            recognizedSeconds: recognizedSeconds
        )
        responses.attach(speculative.task, to: speculative.id)
        for held in speculative.held {
            guard receive(held.event, from: speculative.id, at: held.at) else { return }
        }
    }

    /// Takes one event from the response runner; returns `false` when the response is over
    /// and the runner should stop.
    /// `at` is when the runner produced the event (earlier than now for held events).
    private func receive(_ event: ResponseRunner.Event, from responseID: String, at time: Duration? = nil) -> Bool {
        let delivery = responses.receive(event, from: responseID, at: time ?? clock.now, inputMs: input.receivedMs, ledger: &ledger)
        carryOut(delivery.actions)
        return delivery.goesOn
    }

    /// Ends the response exactly once: stores what was heard, reports, and cancels its task.
    private func finishResponse(_ responseID: String, status: ResponseStatus, heardMs: Int? = nil) {
        carryOut(responses.finish(responseID, status: status, heardMs: heardMs, ledger: &ledger))
    }

    /// Carries out what the response lifecycle decided.
    private func carryOut(_ actions: [ResponseLifecycle.Action]) {
        for action in actions {
            switch action {
            case .emit(let event):
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

    /// The user said nothing for the idle timeout after the agent's last reply: the silent
    /// audio becomes an (empty) user turn, and the agent, when it answers turns by itself,
    /// prompts the user to go on.
    private func idleTimeoutTriggered(audioStartMs: Int, audioEndMs: Int) {
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

    /// Stores a tool result the session produced outside a response (a declined approval).
    func recordToolResult(_ message: ChatMessage, id itemID: String) {
        ledger.upsert(id: itemID, message: message, isInternal: true)
        emit(.itemCompleted(itemID: itemID, message: message))
    }

    /// Keeps the result of a call that finished after its response was interrupted, right
    /// after the call (and its other results), so the next turn's model sees both.
    private func keepToolResult(_ result: ToolResult, of call: ToolCall) {
        guard !isClosed else { return }
        for item in ledger.keepLateToolResult(result, of: call) { emit(.itemCompleted(itemID: item.id, message: item.message)) }
    }

    private func emit(_ event: VoiceSessionEvent) {
        if let eventHandler {
            eventHandler(event)
        } else {
            continuation.yield(event)
        }
    }
}
