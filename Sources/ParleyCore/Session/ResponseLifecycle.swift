import Foundation

/// The responses of a voice session from start to end: the conversation's response in
/// progress, out-of-band responses beside it, the reply that may still be playing at the
/// client, the text each recent reply spoke over its audio, and the latency figures of the turns.
///
/// A value type: it takes the runners' events and the session's requests (start, cut, stop)
/// and returns what to do, in order — events to emit, audio the client plays, recordings to
/// cut — which the session carries out. The conversation is the session's: the calls that
/// store replies take it `inout`.
///
/// ```swift
/// var responses = ResponseLifecycle(outputSampleRate: 24_000)
/// let response = responses.makeResponse(id: "resp_1", request: request, trigger: now, transcriptionMs: nil, recognizedSeconds: nil, speaks: true)
/// carryOut(responses.begin(response, request: request))
/// let delivery = responses.receive(.textDelta("Hi"), from: "resp_1", at: now, inputMs: 1_200, ledger: &ledger)
/// carryOut(delivery.actions)
/// ```
struct ResponseLifecycle {
    /// What the session does, in order.
    enum Action {
        /// Tell the client.
        case emit(VoiceSessionEvent)
        /// The client starts playing this audio of item `itemID` now (for the echo canceller and
        /// the call recording).
        case play([Int16], itemID: String)
        /// The call recording keeps `milliseconds` of item `itemID`'s audio (the rest was not heard).
        case cutRecording(itemID: String, milliseconds: Int)
        /// The conversation's response ended: silence from when its audio ends playing (input
        /// time `audioEndMs`, or now if later) counts towards the idle timeout.
        case armIdleTimeout(audioEndMs: Int)
    }

    /// What taking a runner's event led to.
    struct Delivery {
        var actions: [Action]
        /// Whether the response goes on (`false`: it is over and its runner should stop).
        var goesOn: Bool
    }

    /// How many replies keep their spoken text for a later `truncate`.
    private static let repliesKeptForTruncation = 8
    /// How many turns' latency figures are kept.
    private static let metricsKept = 1000

    /// The rate of the output audio.
    let outputSampleRate: Int
    /// The conversation's response in progress.
    private(set) var current: ActiveResponse?
    /// Out-of-band responses in progress, by id: they run beside `current`.
    private var outOfBand: [String: ActiveResponse] = [:]
    /// The last reply that finished while its audio may still be playing at the client.
    private var playingReply: (itemID: String, playback: PlaybackEstimate)?
    /// Spoken-text trackers of recent replies, kept so a later `truncate` can cut them.
    private var spokenTexts: [String: SpokenTextTracker] = [:]
    private var spokenTextOrder: [String] = []
    /// Latency figures of the turns answered, oldest first.
    private(set) var metricsHistory: [TurnMetrics] = []

    init(outputSampleRate: Int) { self.outputSampleRate = outputSampleRate }

    /// The ids of the out-of-band responses in progress.
    var outOfBandIDs: [String] { Array(outOfBand.keys) }

    /// Whether `responseID` is an out-of-band response in progress.
    func isOutOfBand(_ responseID: String) -> Bool { outOfBand[responseID] != nil }

    /// What the agent is doing at input time `inputMs`, as the interruption policy sees it.
    func agentActivity(atInputMs inputMs: Int) -> InterruptionPolicy.AgentActivity {
        guard let current else {
            return playingReply?.playback.isPlaying(atInputMs: inputMs) == true ? .speaking : .idle
        }
        return current.playback.isPlaying(atInputMs: inputMs) ? .speaking : .thinking
    }

    /// The text written so far by the conversation's response, when it speaks into item `itemID`.
    func textInProgress(ofItem itemID: String) -> String? {
        guard let current, current.itemID == itemID else { return nil }
        return current.text
    }

    /// A response about to start.
    /// - Parameters:
    ///   - trigger: when the turn ended (end of speech, or the request for a text turn).
    ///   - transcriptionMs: end of speech → final transcript, for spoken turns.
    ///   - recognizedSeconds: the audio the recognizer processed, for spoken turns.
    ///   - speaks: whether it speaks or only writes.
    func makeResponse(
        id responseID: String, request: ResponseRequest, trigger: Duration, transcriptionMs: Double?, recognizedSeconds: Double?,
        speaks: Bool
    ) -> ActiveResponse {
        var metrics = TurnMetrics(responseID: responseID, transcriptionMs: transcriptionMs)
        metrics.recognizedAudioSeconds = recognizedSeconds
        return ActiveResponse(
            id: responseID, itemID: IdentifierGenerator.make("item"), trigger: trigger, metrics: metrics,
            tracker: SpokenTextTracker(sampleRate: outputSampleRate),
            playback: PlaybackEstimate(sampleRate: outputSampleRate),
            speaks: speaks, isOutOfBand: request.isOutOfBand
        )
    }

    /// Starts `response`: out of band beside the conversation's, or as the conversation's
    /// (one already in progress must have been finished).
    mutating func begin(_ response: ActiveResponse, request: ResponseRequest) -> [Action] {
        if response.isOutOfBand { outOfBand[response.id] = response } else { current = response }
        return [.emit(.responseStarted(responseID: response.id, request: request))]
    }

    /// Gives response `responseID` the task that runs it, cancelled when the response ends.
    mutating func attach(_ task: Task<Void, Never>, to responseID: String) {
        update(responseID) { $0.task = task }
    }

    /// Takes one event from the runner of `responseID`.
    /// - Parameters:
    ///   - time: when the runner produced the event (earlier than now for held events); stage
    ///     times are measured to it, and count as 0 for what was ready before the turn ended.
    ///   - inputMs: the input time reached, the clock of playback.
    mutating func receive(
        _ event: ResponseRunner.Event, from responseID: String, at time: Duration, inputMs: Int, ledger: inout ConversationLedger
    ) -> Delivery {
        guard var active = response(responseID) else { return Delivery(actions: [], goesOn: false) }
        var actions: [Action] = []
        let sinceTrigger = max(0, (time - active.trigger).timeInterval * 1000)
        switch event {
        case .textDelta(let delta):
            if active.metrics.firstTokenMs == nil { active.metrics.firstTokenMs = sinceTrigger }
            actions += openMessageItem(&active, ledger: &ledger)
            active.text += delta
            actions.append(.emit(.agentTextDelta(responseID: responseID, itemID: active.itemID, delta: delta)))
        case .synthesisStarted:
            if active.metrics.firstSynthesisMs == nil { active.metrics.firstSynthesisMs = sinceTrigger }
        case .audio(let samples, let segment):
            if active.metrics.firstAudioMs == nil { active.metrics.firstAudioMs = sinceTrigger }
            actions += openMessageItem(&active, ledger: &ledger)
            active.tracker.recordAudio(sampleCount: samples.count, speaking: segment)
            active.playback.recordChunk(sampleCount: samples.count, atInputMs: inputMs)
            active.metrics.synthesizedAudioSeconds += Double(samples.count) / Double(outputSampleRate)
            actions.append(.play(samples, itemID: active.itemID))
            actions.append(.emit(.agentAudio(responseID: responseID, itemID: active.itemID, samples: samples)))
        case .toolCallStarted(let call):
            actions.append(.emit(.toolCallStarted(responseID: responseID, call: call)))
        case .toolCallFinished(let call, let output, let isError):
            actions.append(.emit(.toolCallFinished(responseID: responseID, call: call, output: output, isError: isError)))
        case .intermediateMessage(let message):
            guard !active.isOutOfBand else { break }
            let itemID = IdentifierGenerator.make("item")
            ledger.upsert(id: itemID, message: message, isInternal: true)
            actions.append(.emit(.itemCompleted(itemID: itemID, message: message)))
        case .clientToolCalls(_, let calls):
            // The text before the calls is the message item's; each call is an item of its own.
            for call in calls {
                let itemID = IdentifierGenerator.make("item")
                let previous = active.isOutOfBand ? nil : ledger.lastItemID
                let message = ChatMessage.assistant(text: "", toolCalls: [call])
                actions.append(.emit(.functionCallRequested(responseID: responseID, itemID: itemID, call: call, previousItemID: previous)))
                guard !active.isOutOfBand else { continue }
                ledger.upsert(id: itemID, message: message)
                actions.append(.emit(.itemCompleted(itemID: itemID, message: message)))
            }
            active.clientToolsRequested = true
        case .finished(let reason, let usage):
            active.metrics.completionTokens = usage?.completionTokens
            keep(active)
            let status: ResponseStatus = switch reason {
            case .stop, .toolCalls: .completed
            default: .incomplete
            }
            return Delivery(actions: finish(responseID, status: status, usage: usage, ledger: &ledger), goesOn: false)
        case .failed(let error):
            keep(active)
            return Delivery(actions: finish(responseID, status: .failed, error: error, ledger: &ledger), goesOn: false)
        }
        keep(active)
        return Delivery(actions: actions, goesOn: true)
    }

    /// Ends response `responseID` exactly once: stores what was heard (the listener heard
    /// `heardMs` of its audio, when known), reports, and cancels its task. Nothing when it is
    /// not in progress.
    mutating func finish(
        _ responseID: String, status: ResponseStatus, error: SessionError? = nil, heardMs: Int? = nil, usage: TokenUsage? = nil,
        ledger: inout ConversationLedger
    ) -> [Action] {
        var actions: [Action] = []
        let active: ActiveResponse
        if let inBand = current, inBand.id == responseID {
            active = inBand
            current = nil
            actions.append(.armIdleTimeout(audioEndMs: active.playback.endInputMs))
        } else if let outOfBand = outOfBand.removeValue(forKey: responseID) {
            active = outOfBand
        } else {
            return []
        }
        active.task?.cancel()
        if active.messageItemOpened {
            let interrupted = status == .cancelled || active.heardLimitMs != nil
            // Text-only responses were "heard" as far as their text was sent.
            let heard = [heardMs, active.heardLimitMs].compactMap { $0 }.min() ?? active.tracker.sentMilliseconds
            let text = interrupted && active.speaks ? active.tracker.heardText(upToMilliseconds: heard) : active.text
            if interrupted { actions.append(.cutRecording(itemID: active.itemID, milliseconds: heard)) }
            let message = ChatMessage.assistant(text: text, toolCalls: [], interrupted: interrupted)
            if !active.isOutOfBand {
                remember(active.tracker, for: active.itemID)
                ledger.upsert(id: active.itemID, message: message)
                playingReply = interrupted || !active.speaks ? nil : (active.itemID, active.playback)
            }
            actions.append(.emit(.outputItemDone(responseID: responseID, itemID: active.itemID, message: message)))
            if !active.isOutOfBand { actions.append(.emit(.itemCompleted(itemID: active.itemID, message: message))) }
        }
        if let error { actions.append(.emit(.error(error))) }
        actions.append(.emit(.responseDone(responseID: responseID, status: status, error: error, usage: usage)))
        guard !active.isOutOfBand else { return actions }
        metricsHistory.append(active.metrics)
        if metricsHistory.count > Self.metricsKept { metricsHistory.removeFirst(metricsHistory.count - Self.metricsKept) }
        actions.append(.emit(.turnMetrics(active.metrics)))
        return actions
    }

    /// Cuts reply `itemID` to what the listener heard: `audioEndMs` of its audio. The reply
    /// being spoken goes on (the client cancels it if it wants to); what is stored when it
    /// ends is what was heard up to here.
    /// - Returns: `nil` when the item is no reply this session spoke.
    mutating func truncate(itemID: String, audioEndMs: Int, ledger: inout ConversationLedger) -> [Action]? {
        if var active = current, active.itemID == itemID, active.messageItemOpened {
            active.heardLimitMs = min(active.heardLimitMs ?? audioEndMs, audioEndMs)
            current = active
            return [.emit(.itemTruncated(itemID: itemID, audioEndMs: audioEndMs, heardText: active.tracker.heardText(upToMilliseconds: audioEndMs)))]
        }
        guard case .assistant(_, let toolCalls, _)? = ledger.message(id: itemID),
              let tracker = spokenTexts[itemID] else { return nil }
        let heard = tracker.heardText(upToMilliseconds: audioEndMs)
        let message = ChatMessage.assistant(text: heard, toolCalls: toolCalls, interrupted: true)
        ledger.upsert(id: itemID, message: message)
        return [.emit(.itemTruncated(itemID: itemID, audioEndMs: audioEndMs, heardText: heard)), .emit(.itemCompleted(itemID: itemID, message: message))]
    }

    /// The user interrupted: the agent stops where its audio stopped (input time
    /// `stoppedAtMs`), and the reply in progress, or the one still playing, is stored as heard by then.
    mutating func stopAgent(atInputMs stoppedAtMs: Int, ledger: inout ConversationLedger) -> [Action] {
        defer { playingReply = nil }
        if let active = current {
            return finish(active.id, status: .cancelled, heardMs: active.playback.heardMilliseconds(atInputMs: stoppedAtMs), ledger: &ledger)
        }
        guard let reply = playingReply, reply.playback.isPlaying(atInputMs: stoppedAtMs),
              case .assistant(_, let toolCalls, _)? = ledger.message(id: reply.itemID), let tracker = spokenTexts[reply.itemID] else { return [] }
        // The reply had finished being sent but was still playing: it is stored as heard.
        let heard = tracker.heardText(upToMilliseconds: reply.playback.heardMilliseconds(atInputMs: stoppedAtMs))
        let message = ChatMessage.assistant(text: heard, toolCalls: toolCalls, interrupted: true)
        ledger.upsert(id: reply.itemID, message: message)
        return [.emit(.itemCompleted(itemID: reply.itemID, message: message))]
    }

    /// Announces the response's message item the first time it has something to say; the item
    /// takes its place in the conversation then, so later items come after it.
    private func openMessageItem(_ active: inout ActiveResponse, ledger: inout ConversationLedger) -> [Action] {
        guard !active.messageItemOpened else { return [] }
        active.messageItemOpened = true
        let previous = active.isOutOfBand ? nil : ledger.lastItemID
        if !active.isOutOfBand { ledger.reserve(id: active.itemID) }
        return [.emit(.outputItemStarted(responseID: active.id, itemID: active.itemID, kind: .message, previousItemID: previous))]
    }

    /// The response in progress with this id, in band or out of band.
    private func response(_ responseID: String) -> ActiveResponse? {
        if let current, current.id == responseID { return current }
        return outOfBand[responseID]
    }

    /// Stores the state of a response that is still in progress.
    private mutating func keep(_ active: ActiveResponse) {
        update(active.id) { $0 = active }
    }

    private mutating func update(_ responseID: String, _ change: (inout ActiveResponse) -> Void) {
        if current?.id == responseID {
            change(&current!)
        } else if outOfBand[responseID] != nil {
            change(&outOfBand[responseID]!)
        }
    }

    /// Keeps the spoken-text tracker of a finished reply for a later `truncate`; only the most
    /// recent replies are kept, so a long session does not grow.
    private mutating func remember(_ tracker: SpokenTextTracker, for itemID: String) {
        spokenTexts[itemID] = tracker
        spokenTextOrder.append(itemID)
        if spokenTextOrder.count > Self.repliesKeptForTruncation { spokenTexts.removeValue(forKey: spokenTextOrder.removeFirst()) }
    }
}
