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
    public private(set) var metricsHistory: [TurnMetrics] = []

    private let providers: VoiceSessionProviders
    private let clock: MonotonicClock
    /// The rate the session's audio output has (24 kHz for the realtime protocol).
    public nonisolated let outputSampleRate: Int

    // Input
    private var input: InputPipeline
    private var speechItemID: String?
    private var lastPartialAtMs = 0
    private var partialTask: Task<Void, Never>?
    private var transcriptionQueue: [PendingTranscription] = []
    private var transcriptionTask: Task<Void, Never>?
    private var preemptiveTranscription = PreemptiveTranscription()
    private var speculativeResponse: SpeculativeResponse?

    // Output
    private var response: ActiveResponse?
    private var deferredResponse: DeferredResponse?
    private var responseTask: Task<Void, Never>?
    private var isClosed = false

    /// A response asked for while committed audio was still being transcribed.
    private struct DeferredResponse: Sendable {
        var id: String
        var instructions: String?
    }

    /// A committed utterance waiting for its final transcript.
    private struct PendingTranscription: Sendable {
        var itemID: String
        var samples: [Float]
        var committedAt: Duration
        var createsResponse: Bool
        /// The transcription started during the silence window, when there was one.
        var preemptive: Task<Transcription, any Error>?
        /// That transcription's result, when it had already arrived (a response was started on it).
        var finished: Transcription?
    }

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
        self.clock = clock
        self.input = InputPipeline(
            detector: providers.makeVoiceActivityDetector(),
            recognizerRate: providers.recognizer.sampleRate,
            configuration: configuration
        )
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
        let started = preemptiveTranscription.follow(
            silenceStartedAtMs: input.silenceStartedAtMs, nowMs: nowMs, delayMs: configuration.preemptiveTranscriptionAfterMs,
            turn: { input.turnInProgress }, recognizer: providers.recognizer
        )
        if let speculative = speculativeResponse, !speculative.turnEnded,
           !preemptiveTranscription.isRunning || speculative.generation != preemptiveTranscription.generation {
            dropSpeculativeResponse()
        }
        guard let started else { return }
        // The whole turn is being transcribed: a partial pass still running only competes for the CPU.
        partialTask?.cancel()
        guard mayGeneratePreemptively else { return }
        let generation = preemptiveTranscription.generation
        Task { [weak self] in
            guard let transcription = try? await started.value else { return }
            await self?.startSpeculativeResponse(answering: transcription, generation: generation)
        }
    }

    private var mayGeneratePreemptively: Bool {
        SpeculativeResponse.isAllowed(by: configuration, serverTools: providers.tools)
    }

    /// Drops the early transcription and the response started on it.
    private func dropPreemptiveWork() {
        preemptiveTranscription.cancel()
        dropSpeculativeResponse()
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
    public var hasActiveResponse: Bool { response != nil || deferredResponse != nil }

    /// Drops the buffered input audio.
    public func clearAudio() {
        guard !isClosed else { return }
        input.clear()
        partialTask?.cancel()
        dropPreemptiveWork()
        speechItemID = nil
        emit(.inputCleared)
    }

    /// Adds a typed user message (or any other message) to the conversation.
    /// - Returns: the new item's id.
    @discardableResult
    public func addItem(_ message: ChatMessage, id: String? = nil, after previousID: String? = nil) -> String {
        let itemID = id ?? IdentifierGenerator.make("item")
        let previous = previousID ?? ledger.lastItemID
        ledger.insert(id: itemID, message: message, after: previous)
        emit(.itemAdded(itemID: itemID, previousItemID: previous, message: message))
        emit(.itemCompleted(itemID: itemID, message: message))
        return itemID
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
        configuration = newConfiguration
        input.apply(newConfiguration)
        if switchedMode {
            input.clear()
            dropPreemptiveWork()
        }
    }

    // MARK: - Responses

    /// Starts a response to the conversation so far, cancelling one in progress.
    /// - Returns: the response id.
    @discardableResult
    public func createResponse(instructionsOverride: String? = nil) -> String {
        let responseID = IdentifierGenerator.make("resp")
        // A response asked for right after a commit must hear what was said: it waits for the
        // committed audio's transcript.
        if transcriptionTask != nil || !transcriptionQueue.isEmpty {
            deferredResponse = DeferredResponse(id: responseID, instructions: instructionsOverride)
            return responseID
        }
        startResponse(id: responseID, trigger: clock.now, transcriptionMs: nil, recognizedSeconds: nil, instructions: instructionsOverride)
        return responseID
    }

    /// Cancels the response in progress, if any; the stored reply keeps what was sent.
    public func cancelResponse() {
        deferredResponse = nil
        guard let active = response else { return }
        finishResponse(active.id, status: .cancelled, error: nil, heardMs: nil)
    }

    /// Cuts an assistant item to what the listener heard: `audioEndMs` of its audio.
    /// - Returns: `false` when the item is unknown or not an assistant message.
    @discardableResult
    public func truncate(itemID: String, audioEndMs: Int) -> Bool {
        if let active = response, active.itemID == itemID {
            finishResponse(active.id, status: .cancelled, error: nil, heardMs: audioEndMs)
            return true
        }
        guard case .assistant(_, let toolCalls, _)? = ledger.message(id: itemID),
              let tracker = spokenTexts[itemID] else { return false }
        let heard = tracker.heardText(upToMilliseconds: audioEndMs)
        let message = ChatMessage.assistant(text: heard, toolCalls: toolCalls, interrupted: true)
        ledger.upsert(id: itemID, message: message)
        emit(.itemTruncated(itemID: itemID, audioEndMs: audioEndMs, heardText: heard))
        emit(.itemCompleted(itemID: itemID, message: message))
        return true
    }

    /// Hands every later event to `handler` the moment it happens, on the session's executor,
    /// instead of queueing it on `events`, until the session is closed. A consumer sharing that
    /// executor handles each event without waiting for a task of its own to be scheduled, which
    /// under load can take longer than the whole turn.
    public func deliverEvents(to handler: @escaping @Sendable (VoiceSessionEvent) -> Void) {
        eventHandler = handler
    }

    /// Ends the session: cancels everything it started and finishes `events`.
    public func close() {
        guard !isClosed else { return }
        if let active = response { finishResponse(active.id, status: .cancelled, error: nil, heardMs: nil) }
        partialTask?.cancel()
        dropPreemptiveWork()
        transcriptionTask?.cancel()
        transcriptionQueue.forEach { $0.preemptive?.cancel() }
        transcriptionQueue.removeAll()
        deferredResponse = nil
        isClosed = true
        continuation.finish()
        // The handler's owner usually holds the session: letting go ends that cycle.
        eventHandler = nil
    }

    /// p50/p95 of end of speech → first audio over the session's turns.
    public var firstAudioSummary: LatencySummary? { LatencySummary(metricsHistory.compactMap(\.firstAudioMs)) }

    /// Whether a response to a turn still in its silence window is being prepared.
    var isAnsweringEarly: Bool { speculativeResponse != nil }

    /// Whether the response prepared during the silence window has said all it will say.
    var earlyAnswerIsComplete: Bool {
        speculativeResponse?.held.contains { held in
            if case .finished = held.event { true } else { false }
        } ?? false
    }

    /// Whether any task of the session is still running (for leak checks).
    public var hasRunningTasks: Bool {
        responseTask != nil || transcriptionTask != nil || partialTask != nil || preemptiveTranscription.isRunning
            || speculativeResponse != nil
    }

    // MARK: - Turn detection

    private func handle(frame: InputPipeline.Frame) {
        let activity = agentActivity(atInputMs: frame.endMs)
        if input.bargeIn(probability: frame.probability, activity: activity, endMs: frame.endMs) == .interrupt,
           configuration.turnDetection?.interruptResponse ?? false, let active = response {
            let heardMs = active.playback.heardMilliseconds(atInputMs: frame.endMs)
            finishResponse(active.id, status: .cancelled, error: nil, heardMs: heardMs)
        }
        handle(turnActions: input.detectTurns(frame), atMs: frame.endMs)
    }

    /// Announces turns the detector started or ended, and commits ended ones.
    private func handle(turnActions: [TurnDetector.Action], atMs nowMs: Int) {
        for action in turnActions {
            switch action {
            case .speechStarted(let startMs):
                let itemID = IdentifierGenerator.make("item")
                speechItemID = itemID
                lastPartialAtMs = nowMs
                emit(.speechStarted(itemID: itemID, audioStartMs: startMs))
            case .speechStopped(let endMs):
                emit(.speechStopped(itemID: speechItemID ?? IdentifierGenerator.make("item"), audioEndMs: endMs))
            case .commit(let utterance):
                let itemID = speechItemID ?? IdentifierGenerator.make("item")
                // The early transcription heard the whole turn unless speech forced this commit.
                let generation = preemptiveTranscription.generation
                let preemptive = preemptiveTranscription.take()
                if utterance.reachedMaximumLength {
                    preemptive?.cancel()
                    dropSpeculativeResponse()
                }
                speculativeResponse?.turnEnded = true
                let early = utterance.reachedMaximumLength ? nil : preemptive
                commit(
                    samples: utterance.samples, itemID: itemID, createsResponse: configuration.turnDetection?.createResponse ?? false,
                    preemptive: early,
                    finished: early == nil ? nil : speculativeResponse.flatMap { $0.generation == generation ? $0.transcription : nil }
                )
            case .idleTimeout:
                emit(.error(SessionError(code: "idle_timeout", message: "No speech was heard before the idle timeout.")))
            }
        }
        if let itemID = speechItemID {
            refreshPartialIfDue(utterance: { $0.turnInProgress }, itemID: itemID, nowMs: nowMs)
        }
    }

    private func agentActivity(atInputMs inputMs: Int) -> BargeInPolicy.AgentActivity {
        guard let active = response else { return .idle }
        return active.playback.isPlaying(atInputMs: inputMs) ? .speaking : .thinking
    }

    private func commit(
        samples: [Float], itemID: String, createsResponse: Bool, preemptive: Task<Transcription, any Error>? = nil, finished: Transcription? = nil
    ) {
        speechItemID = nil
        partialTask?.cancel()
        partialTask = nil
        let previous = ledger.lastItemID
        emit(.inputCommitted(itemID: itemID, previousItemID: previous))
        transcriptionQueue.append(PendingTranscription(
            itemID: itemID, samples: samples, committedAt: clock.now, createsResponse: createsResponse, preemptive: preemptive,
            finished: finished
        ))
        startTranscriptionWorkerIfIdle()
    }

    // MARK: - Transcription

    private func startTranscriptionWorkerIfIdle() {
        guard transcriptionTask == nil, !transcriptionQueue.isEmpty else { return }
        let pending = transcriptionQueue.removeFirst()
        if let finished = pending.finished {
            // The turn was transcribed (and answered) during its silence window: it goes on in
            // this call, not after a task and a hop back here, each a wait in the pool's queue.
            transcriptionFinished(pending, result: .success(finished))
            return
        }
        let recognizer = providers.recognizer
        transcriptionTask = Task { [weak self] in
            let result: Result<Transcription, any Error>
            do {
                if let preemptive = pending.preemptive {
                    result = .success(try await withTaskCancellationHandler { try await preemptive.value } onCancel: { preemptive.cancel() })
                } else {
                    result = .success(try await recognizer.transcribe(pending.samples, isFinal: true))
                }
            } catch {
                result = .failure(error)
            }
            await self?.transcriptionFinished(pending, result: result)
        }
    }

    private func transcriptionFinished(_ pending: PendingTranscription, result: Result<Transcription, any Error>) {
        transcriptionTask = nil
        defer {
            startTranscriptionWorkerIfIdle()
            startDeferredResponseIfTranscribed(after: pending)
        }
        guard !isClosed else { return }
        let previousItemID = ledger.lastItemID
        // A response started before the turn ended either becomes this turn's response or goes.
        var speculative = speculativeResponse?.turnEnded == true ? speculativeResponse : nil
        defer { if let speculative { dropSpeculativeResponse(speculative.id) } }
        switch result {
        case .failure(let error):
            if error is CancellationError { return }
            let sessionError = SessionError.provider(error, stage: "transcription")
            emit(.userTranscriptFailed(itemID: pending.itemID, error: sessionError))
            emit(.error(sessionError))
        case .success(let transcription):
            let text = transcription.text.trimmingCharacters(in: .whitespacesAndNewlines)
            emit(.userTranscriptFinal(itemID: pending.itemID, text: text))
            // A turn that transcribes to nothing (a cough, a false interruption) is no turn.
            guard !text.isEmpty else { return }
            let message = ChatMessage.user(text)
            ledger.upsert(id: pending.itemID, message: message)
            emit(.itemCompleted(itemID: pending.itemID, message: message))
            guard pending.createsResponse else { return }
            let transcriptionMs = clock.millisecondsSince(pending.committedAt)
            if let answer = speculative, answer.transcript == text, answer.lastItemID == previousItemID, response == nil {
                speculative = nil
                adopt(answer, trigger: pending.committedAt, transcriptionMs: transcriptionMs, recognizedSeconds: transcription.audioDuration)
            } else {
                startResponse(
                    trigger: pending.committedAt, transcriptionMs: transcriptionMs,
                    recognizedSeconds: transcription.audioDuration, instructions: nil
                )
            }
        }
    }

    /// Starts the response that waited for transcripts once none is pending.
    private func startDeferredResponseIfTranscribed(after pending: PendingTranscription) {
        guard !isClosed, transcriptionTask == nil, transcriptionQueue.isEmpty, let deferred = deferredResponse else { return }
        deferredResponse = nil
        startResponse(
            id: deferred.id, trigger: pending.committedAt, transcriptionMs: clock.millisecondsSince(pending.committedAt),
            recognizedSeconds: nil, instructions: deferred.instructions
        )
    }

    private func refreshPartialIfDue(utterance: (InputPipeline) -> [Float], itemID: String?, nowMs: Int? = nil) {
        let interval = configuration.partialTranscriptIntervalMs
        guard interval > 0, providers.recognizer.supportsPartials, partialTask == nil, !preemptiveTranscription.isRunning else { return }
        let currentMs = nowMs ?? input.manualBufferMs
        guard currentMs - lastPartialAtMs >= interval else { return }
        lastPartialAtMs = currentMs
        let samples = utterance(input)
        guard samples.count >= providers.recognizer.sampleRate / 4 else { return }
        let partialItemID = itemID ?? speechItemID ?? IdentifierGenerator.make("item")
        speechItemID = partialItemID
        let recognizer = providers.recognizer
        partialTask = Task { [weak self] in
            let transcription = try? await recognizer.transcribe(samples, isFinal: false)
            await self?.partialFinished(itemID: partialItemID, text: transcription?.text)
        }
    }

    private func partialFinished(itemID: String, text: String?) {
        partialTask = nil
        guard !isClosed, speechItemID == itemID, let text, !text.isEmpty else { return }
        emit(.userTranscriptPartial(itemID: itemID, text: text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    // MARK: - Response lifecycle

    /// Spoken-text trackers of assistant items, kept so a later `truncate` can cut them.
    private var spokenTexts: [String: SpokenTextTracker] = [:]
    private var spokenTextOrder: [String] = []

    @discardableResult
    private func startResponse(
        id responseID: String = IdentifierGenerator.make("resp"), trigger: Duration, transcriptionMs: Double?,
        recognizedSeconds: Double?, instructions: String?
    ) -> String {
        if let active = response {
            let heard = active.playback.sentMilliseconds
            finishResponse(active.id, status: .cancelled, error: nil, heardMs: heard)
        }
        begin(responseID: responseID, trigger: trigger, transcriptionMs: transcriptionMs, recognizedSeconds: recognizedSeconds)
        let runner = makeRunner(responseID: responseID, history: ledger.messages, instructions: instructions)
        responseTask = Task { [weak self] in
            await runner.run { [weak self] event in await self?.receive(event, from: responseID) ?? false }
        }
        return responseID
    }

    /// Makes `responseID` the response in progress and announces it.
    private func begin(responseID: String, trigger: Duration, transcriptionMs: Double?, recognizedSeconds: Double?) {
        var metrics = TurnMetrics(responseID: responseID, transcriptionMs: transcriptionMs)
        metrics.recognizedAudioSeconds = recognizedSeconds
        response = ActiveResponse(
            id: responseID, itemID: IdentifierGenerator.make("item"), trigger: trigger, metrics: metrics,
            tracker: SpokenTextTracker(sampleRate: outputSampleRate),
            playback: PlaybackEstimate(sampleRate: outputSampleRate)
        )
        emit(.responseStarted(responseID: responseID))
    }

    /// The runner of a response to `history`, with the session's agent settings.
    private func makeRunner(responseID: String, history: [ChatMessage], instructions: String?) -> ResponseRunner {
        var agentOptions = providers.agentOptions
        agentOptions.temperature = configuration.temperature ?? agentOptions.temperature
        agentOptions.maxTokens = configuration.maxResponseTokens ?? agentOptions.maxTokens
        agentOptions.externalTools = configuration.clientTools
        let agent = Agent(
            model: providers.model,
            instructions: instructions ?? configuration.instructions,
            tools: providers.tools,
            options: agentOptions
        )
        return ResponseRunner(
            responseID: responseID,
            agent: agent,
            history: history,
            synthesizer: configuration.speaksResponses ? providers.synthesizer : nil,
            speech: configuration.speech,
            outputSampleRate: outputSampleRate,
            makeResampler: providers.makeResampler
        )
    }

    // MARK: - Preemptive generation

    /// Starts answering the early transcript of a turn still in its silence window, when that
    /// transcription is still the one wanted and nothing else is under way.
    private func startSpeculativeResponse(answering transcription: Transcription, generation: Int) {
        let text = transcription.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !isClosed, !text.isEmpty, mayGeneratePreemptively, speculativeResponse == nil,
              preemptiveTranscription.isRunning, preemptiveTranscription.generation == generation,
              response == nil, deferredResponse == nil, transcriptionTask == nil, transcriptionQueue.isEmpty else { return }
        let responseID = IdentifierGenerator.make("resp")
        let runner = makeRunner(responseID: responseID, history: ledger.messages + [.user(text)], instructions: nil)
        let task = Task { [weak self] in
            await runner.run { [weak self] event in await self?.receiveSpeculative(event, from: responseID) ?? false }
        }
        speculativeResponse = SpeculativeResponse(
            id: responseID, generation: generation, transcription: transcription, transcript: text, lastItemID: ledger.lastItemID, task: task
        )
    }

    /// Holds an event of a response whose turn has not ended, or passes it on once adopted.
    private func receiveSpeculative(_ event: ResponseRunner.Event, from responseID: String) -> Bool {
        if response?.id == responseID { return receive(event, from: responseID) }
        guard speculativeResponse?.id == responseID else { return false }
        if case .failed = event {
            // A provider failure before the turn ended is not the turn's: it gets a fresh response.
            dropSpeculativeResponse(responseID)
            return false
        }
        speculativeResponse?.held.append(SpeculativeResponse.HeldEvent(event: event, at: clock.now))
        return true
    }

    /// Makes a response started before the turn ended the turn's response: what it already
    /// said goes out now, the rest as it comes.
    private func adopt(_ speculative: SpeculativeResponse, trigger: Duration, transcriptionMs: Double, recognizedSeconds: Double?) {
        speculativeResponse = nil
        begin(responseID: speculative.id, trigger: trigger, transcriptionMs: transcriptionMs, recognizedSeconds: recognizedSeconds)
        responseTask = speculative.task
        for held in speculative.held {
            guard receive(held.event, from: speculative.id, at: held.at) else { return }
        }
    }

    /// Cancels the response started before its turn ended (only `id`'s, when given).
    private func dropSpeculativeResponse(_ id: String? = nil) {
        guard let speculative = speculativeResponse, id == nil || speculative.id == id else { return }
        speculative.task.cancel()
        speculativeResponse = nil
    }

    /// Takes one event from the response runner; returns `false` when the response is over
    /// and the runner should stop.
    /// `at` is when the runner produced the event (earlier than now for held events); stage
    /// times are measured to it, and count as 0 for what was ready before the turn ended.
    private func receive(_ event: ResponseRunner.Event, from responseID: String, at time: Duration? = nil) -> Bool {
        guard var active = response, active.id == responseID else { return false }
        defer { if response?.id == responseID { response = active } }
        let sinceTrigger = max(0, ((time ?? clock.now) - active.trigger).timeInterval * 1000)
        switch event {
        case .textDelta(let delta):
            if active.metrics.firstTokenMs == nil { active.metrics.firstTokenMs = sinceTrigger }
            openMessageItem(&active)
            active.text += delta
            emit(.agentTextDelta(responseID: responseID, itemID: active.itemID, delta: delta))
        case .audio(let samples, let segment):
            if active.metrics.firstAudioMs == nil { active.metrics.firstAudioMs = sinceTrigger }
            openMessageItem(&active)
            active.tracker.recordAudio(sampleCount: samples.count, speaking: segment)
            active.playback.recordChunk(sampleCount: samples.count, atInputMs: input.receivedMs)
            active.metrics.synthesizedAudioSeconds += Double(samples.count) / Double(outputSampleRate)
            emit(.agentAudio(responseID: responseID, itemID: active.itemID, samples: samples))
        case .toolCallStarted(let call):
            emit(.toolCallStarted(responseID: responseID, call: call))
        case .toolCallFinished(let call, let output, let isError):
            emit(.toolCallFinished(responseID: responseID, call: call, output: output, isError: isError))
        case .intermediateMessage(let message):
            let itemID = IdentifierGenerator.make("item")
            ledger.upsert(id: itemID, message: message)
            emit(.itemCompleted(itemID: itemID, message: message))
        case .clientToolCalls(let text, let calls):
            let assistantID = IdentifierGenerator.make("item")
            let message = ChatMessage.assistant(text: text, toolCalls: calls)
            ledger.upsert(id: assistantID, message: message)
            emit(.itemCompleted(itemID: assistantID, message: message))
            for call in calls {
                emit(.functionCallRequested(responseID: responseID, itemID: IdentifierGenerator.make("item"), call: call))
            }
            active.clientToolsRequested = true
        case .finished(let reason, let usage):
            active.metrics.completionTokens = usage?.completionTokens
            response = active
            let status: ResponseStatus = switch reason {
            case .stop, .toolCalls: .completed
            default: .incomplete
            }
            finishResponse(responseID, status: status, error: nil, heardMs: nil, usage: usage)
            return false
        case .failed(let error):
            response = active
            finishResponse(responseID, status: .failed, error: error, heardMs: nil)
            return false
        }
        return true
    }

    private func openMessageItem(_ active: inout ActiveResponse) {
        guard !active.messageItemOpened else { return }
        active.messageItemOpened = true
        emit(.outputItemStarted(responseID: active.id, itemID: active.itemID, kind: .message))
    }

    /// Ends the response exactly once: stores what was heard, reports, and cancels its tasks.
    private func finishResponse(_ responseID: String, status: ResponseStatus, error: SessionError?, heardMs: Int?, usage: TokenUsage? = nil) {
        guard let active = response, active.id == responseID else { return }
        response = nil
        responseTask?.cancel()
        responseTask = nil
        if active.messageItemOpened {
            let interrupted = status == .cancelled
            // Text-only responses were "heard" as far as their text was sent.
            let text = interrupted && configuration.speaksResponses
                ? active.tracker.heardText(upToMilliseconds: heardMs ?? active.tracker.sentMilliseconds)
                : active.text
            let message = ChatMessage.assistant(text: text, toolCalls: [], interrupted: interrupted)
            remember(active.tracker, for: active.itemID)
            ledger.upsert(id: active.itemID, message: message)
            if interrupted {
                emit(.itemTruncated(itemID: active.itemID, audioEndMs: heardMs ?? active.tracker.sentMilliseconds, heardText: text))
            }
            emit(.outputItemDone(responseID: responseID, itemID: active.itemID, message: message))
            emit(.itemCompleted(itemID: active.itemID, message: message))
        }
        if let error { emit(.error(error)) }
        emit(.responseDone(responseID: responseID, status: status, error: error, usage: usage))
        metricsHistory.append(active.metrics)
        if metricsHistory.count > 1000 { metricsHistory.removeFirst(metricsHistory.count - 1000) }
        emit(.turnMetrics(active.metrics))
    }

    /// Keeps the spoken-text tracker of a finished reply for a later `truncate`; only the most
    /// recent replies are kept, so a long session does not grow.
    private func remember(_ tracker: SpokenTextTracker, for itemID: String) {
        spokenTexts[itemID] = tracker
        spokenTextOrder.append(itemID)
        if spokenTextOrder.count > 8 { spokenTexts.removeValue(forKey: spokenTextOrder.removeFirst()) }
    }

    private func emit(_ event: VoiceSessionEvent) {
        if let eventHandler {
            eventHandler(event)
        } else {
            continuation.yield(event)
        }
    }
}
