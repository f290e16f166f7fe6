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
    public internal(set) var ledger: ConversationLedger
    /// Latency summaries over the session's turns.
    public var metricsHistory: [TurnMetrics] { responses.metricsHistory }

    /// The engines: recognizer, model, synthesizer, VAD and the rest.
    let providers: VoiceSessionProviders
    /// Where latency figures read the time.
    let clock: MonotonicClock
    /// Makes the resamplers that convert the session's output to other rates (band-limited).
    public nonisolated var makeOutputResampler: @Sendable (Int, Int) -> any Resampler { providers.makeResampler }

    /// The tools the agent runs itself (the client's tools come with the configuration).
    public var serverTools: [ToolDefinition] { agentProviders.tools.definitions }

    /// Whether the session can run `semantic_vad` (its providers include a turn-completion model).
    public nonisolated var judgesTurnCompletion: Bool { providers.turnCompletionModel != nil }

    /// Whether the session can run `noise_reduction` (its providers include a noise suppressor).
    public nonisolated var suppressesNoise: Bool { providers.makeNoiseSuppressor != nil }

    /// Whether the session can cancel its own output from its input (`parley_echo_cancellation`).
    public nonisolated var cancelsEcho: Bool { providers.makeEchoCanceller != nil }

    /// The languages the session's recognizer can be told to hear, `nil` when it does not say.
    public nonisolated var recognizerLanguages: Set<String>? { providers.recognizer.languages }

    /// The rate the session's audio output has (24 kHz for the realtime protocol).
    public nonisolated let outputSampleRate: Int

    // The parts, each owning one concern and deciding as a value type; the session carries out
    // what they decide (in the extension named for each) and owns every task it starts.

    /// Resampling, noise and echo removal, VAD, turn detection, the interruption policy and the
    /// push-to-talk buffer.
    var input: InputPipeline
    /// The item of the turn in progress, once it was announced.
    var speechItemID: String?
    /// The passes over the turn in progress for partial transcripts.
    var partials = PartialTranscripts()
    /// Committed utterances waiting for their transcripts, and the response waiting for them.
    var transcriptions = TranscriptionQueue()
    /// The turn's transcription and answer started while its silence window still runs.
    var preemptive = PreemptiveGeneration()
    /// The responses in progress, the reply still playing, and what each reply said.
    var responses: ResponseLifecycle
    /// Speech over the agent: the turn it begins, held until the interruption is decided, and
    /// where the agent's audio was paused.
    var interruption = InterruptionJudge()
    /// The transcription of the speech over the agent being judged.
    var interruptionTranscription: Task<Void, Never>?
    /// Converts the output to the input's rate for the echo canceller's reference.
    var echoReferenceResampler: (any Resampler)?
    /// Server tools of this session only (its MCP servers'), beside the providers' tools.
    var sessionTools = SessionTools()
    /// The language the caller speaks, as last heard.
    var callerLanguage = CallerLanguage()
    /// Every task the session started, until it ends; `close()` cancels and awaits them.
    let tasks = SessionTasks()
    /// Whether `close()` has run: a closed session takes no input and starts nothing.
    var isClosed = false
    /// The agent the session became by a handoff (its tools, model and loop settings), `nil`
    /// while it is the one it started as.
    var handedOverAgent: AgentSwitch?
    /// The conversation before the last handoff as the summary the agent taking over reads
    /// instead, when its definition asks for one.
    var historySummary: HistorySummary?

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

    /// Commits the buffered audio as a user turn (manual mode; in server VAD mode it commits
    /// whatever the turn in progress holds).
    /// - Throws: `SessionError` `input_audio_buffer_commit_empty` when less than 100 ms is buffered;
    ///   nothing is committed and no turn starts.
    public func commitAudio(createResponse: Bool = false) throws(SessionError) {
        guard !isClosed else { return }
        preemptive.cancel()
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

    /// Drops the buffered input audio.
    public func clearAudio() {
        guard !isClosed else { return }
        input.clear()
        interruption.discardHeldTurn()
        partials.cancel()
        preemptive.cancel()
        speechItemID = nil
        emit(.inputCleared)
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
            preemptive.cancel()
        }
    }

    // MARK: - Lifecycle

    /// Hands every later event to `handler` the moment it happens, on the session's executor,
    /// instead of queueing it on `events`, until the session is closed. A consumer sharing that
    /// executor handles each event without waiting for a task of its own to be scheduled, which
    /// under load can take longer than the whole turn.
    public func deliverEvents(to handler: @escaping @Sendable (VoiceSessionEvent) -> Void) {
        eventHandler = handler
    }

    /// Ends the session: ends its responses (stored as heard), finishes `events`, cancels every
    /// task it started and returns once each has ended. A tool call already running whose tool
    /// is not `isCancellable` belongs to the agent and may finish afterwards, as it does after
    /// an interruption; a closed session no longer keeps its result.
    public func close() async {
        guard !isClosed else {
            await tasks.waitForAll()
            return
        }
        if let active = responses.current { finishResponse(active.id, status: .cancelled) }
        for responseID in responses.outOfBandIDs { finishResponse(responseID, status: .cancelled) }
        preemptive.cancel()
        transcriptions.removeAll()
        isClosed = true
        // Every other task (transcriptions, partial passes, judgements) is cancelled here.
        tasks.cancelAll()
        providers.recorder?.finish()
        continuation.finish()
        // The handler's owner usually holds the session: letting go ends that cycle.
        eventHandler = nil
        await tasks.waitForAll()
    }

    /// p50/p95 of end of speech → first audio over the session's turns.
    public var firstAudioSummary: LatencySummary? { LatencySummary(metricsHistory.compactMap(\.firstAudioMs)) }

    /// Whether any task of the session is still running (for leak checks): a task counts from
    /// its start until it has returned.
    public var hasRunningTasks: Bool { !tasks.isEmpty }

    /// Hands `event` to the event handler, or queues it on `events`.
    func emit(_ event: VoiceSessionEvent) {
        if let eventHandler {
            eventHandler(event)
        } else {
            continuation.yield(event)
        }
    }
}
