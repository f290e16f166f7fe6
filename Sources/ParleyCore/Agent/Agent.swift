import Foundation

/// An LLM agent: instructions, tools and a language model, run one turn at a time.
///
/// A turn streams the reply text as it arrives, runs the tool calls of each step concurrently
/// (each with a timeout; a failing tool's error text goes back to the model), feeds the results
/// back, and repeats up to `AgentOptions.maxSteps` model requests. Cancelling the consuming task
/// cancels the model stream and running tools at once.
///
/// ```swift
/// let agent = Agent(model: model, instructions: "You are brief.", tools: ToolRegistry([CalculatorTool()]))
/// for try await event in agent.run(history: try await store.messages(in: id)) {
///     if case .textDelta(let text) = event { speak(text) }
///     if case .message(let message) = event { try await store.append([message], to: id) }
/// }
/// ```
public struct Agent: Sendable {
    /// The model that writes the replies.
    public var model: any LanguageModel
    /// The system prompt, always sent first.
    public var instructions: String
    /// The tools the model may call.
    public var tools: ToolRegistry
    /// How turns run.
    public var options: AgentOptions

    /// Creates an agent.
    public init(model: any LanguageModel, instructions: String, tools: ToolRegistry = ToolRegistry(), options: AgentOptions = AgentOptions()) {
        self.model = model
        self.instructions = instructions
        self.tools = tools
        self.options = options
    }

    /// Runs one turn on `history` (the conversation so far, ending with the user's message).
    /// - Returns: the turn's events; the stream throws the model's `ProviderError` if a request fails.
    public func run(history: [ChatMessage]) -> AsyncThrowingStream<AgentEvent, any Error> {
        // Events are small and the consumer is the session loop; it drains them as they come.
        let (events, continuation) = AsyncThrowingStream.makeStream(of: AgentEvent.self, bufferingPolicy: .unbounded)
        let turn = Task { [self] in
            do {
                try await runTurn(history: history, events: continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in turn.cancel() }
        return events
    }

    private func runTurn(history: [ChatMessage], events: AsyncThrowingStream<AgentEvent, any Error>.Continuation) async throws {
        var conversation = history
        var totalUsage: TokenUsage?
        // The filler is said at most once a turn, however many steps wait for tools.
        var fillerSpoken = false
        if !options.approvedCalls.isEmpty {
            let results = try await runTools(options.approvedCalls, events: events, fillerSpoken: &fillerSpoken)
            for (call, result) in zip(options.approvedCalls, results) {
                let message = ChatMessage.tool(callID: call.id, content: result.output)
                conversation.append(message)
                events.yield(.message(message))
            }
        }
        for step in 1...options.maxSteps {
            let isLastStep = step == options.maxSteps
            let request = ChatRequest(
                messages: options.window.messages(instructions: instructions, history: conversation),
                tools: tools.definitions + options.externalTools,
                toolChoice: toolChoice(step: step, isLastStep: isLastStep),
                temperature: options.temperature,
                maxTokens: options.maxTokens,
                repetitionPenalty: options.repetitionPenalty
            )
            var text = ""
            var toolCalls: [ToolCall] = []
            var reason = FinishReason.stop
            var usage: TokenUsage?
            for try await event in model.stream(request) {
                switch event {
                case .textDelta(let delta):
                    text += delta
                    events.yield(.textDelta(delta))
                case .toolCall(let call):
                    toolCalls.append(call)
                case .finished(let finishReason, let stepUsage):
                    reason = finishReason
                    usage = stepUsage
                }
            }
            try Task.checkCancellation()
            if let usage {
                totalUsage = TokenUsage(
                    promptTokens: (totalUsage?.promptTokens ?? 0) + usage.promptTokens,
                    completionTokens: (totalUsage?.completionTokens ?? 0) + usage.completionTokens
                )
            }

            let reply = ChatMessage.assistant(text: text, toolCalls: toolCalls)
            if toolCalls.isEmpty {
                if !text.isEmpty { events.yield(.message(reply)) }
                events.yield(.stepFinished(reason, usage))
                events.yield(.finished(reason, totalUsage))
                return
            }
            conversation.append(reply)
            events.yield(.message(reply))
            if toolCalls.contains(where: { call in
                options.externalTools.contains { $0.name == call.name } || options.approvalRequiredTools.contains(call.name)
            }) {
                events.yield(.stepFinished(reason, usage))
                events.yield(.finished(.toolCalls, totalUsage))
                return
            }

            if isLastStep {
                for call in toolCalls {
                    events.yield(.message(.tool(callID: call.id, content: "Not run: the step limit was reached.")))
                }
                events.yield(.stepFinished(reason, usage))
                events.yield(.textDelta(options.maxStepsMessage))
                events.yield(.message(.assistant(text: options.maxStepsMessage)))
                events.yield(.finished(.maxStepsReached, totalUsage))
                return
            }

            let results = try await runTools(toolCalls, events: events, fillerSpoken: &fillerSpoken)
            for (call, result) in zip(toolCalls, results) {
                let message = ChatMessage.tool(callID: call.id, content: result.output)
                conversation.append(message)
                events.yield(.message(message))
            }
            events.yield(.stepFinished(reason, usage))
            if zip(toolCalls, results).contains(where: { call, result in options.handoffTools.contains(call.name) && !result.isError }) {
                events.yield(.finished(.toolCalls, totalUsage))
                return
            }
        }
    }

    /// The tool choice of a step's request: none without tools; the configured choice first,
    /// `none` on the last of several steps, `auto` in between.
    private func toolChoice(step: Int, isLastStep: Bool) -> ToolChoice? {
        if tools.isEmpty && options.externalTools.isEmpty { return nil }
        if step == 1 { return options.firstToolChoice }
        return isLastStep ? ToolChoice.none : .auto
    }

    /// What finished first among the children of one step's tool group.
    private enum StepChild: Sendable {
        case tool(index: Int, ToolResult)
        case fillerDue
        case fillerCancelled
    }

    /// Runs `calls` concurrently; results come back in call order, events in completion order.
    /// The filler is said when they take longer than its delay, unless `fillerSpoken` already.
    private func runTools(
        _ calls: [ToolCall], events: AsyncThrowingStream<AgentEvent, any Error>.Continuation, fillerSpoken: inout Bool
    ) async throws -> [ToolResult] {
        for call in calls { events.yield(.toolCallStarted(call)) }
        let tools = tools
        let timeout = options.toolTimeout
        let clock = options.clock
        let offersFiller = !fillerSpoken
        // Progress the tools report is said once they have run longer than the filler delay.
        let progress = options.fillerDelay.map {
            ToolProgressGate(interval: $0, waitsForFiller: offersFiller && !options.fillerLine.isEmpty)
        }
        let sayProgress = ToolProgressReporter { words in
            if progress?.admits(words) == true { events.yield(.filler(words)) }
        }
        let (results, saidFiller) = await withTaskGroup(of: StepChild.self) { group -> ([ToolResult?], Bool) in
            for (index, call) in calls.enumerated() {
                let cancellable = tools.tool(named: call.name)?.isCancellable ?? true
                let keep = options.keepInterruptedResult
                group.addTask {
                    // Unstructured, so interrupting the turn stops the call only when the tool allows it.
                    let execution = Task {
                        await ToolProgress.$reporter.withValue(sayProgress) { await tools.execute(call, timeout: timeout, clock: clock) }
                    }
                    let result = await withTaskCancellationHandler {
                        await execution.value
                    } onCancel: {
                        if cancellable { execution.cancel() }
                    }
                    if Task.isCancelled, !cancellable { await keep?(call, result) }
                    return .tool(index: index, result)
                }
            }
            if offersFiller, let delay = options.fillerDelay, !options.fillerLine.isEmpty {
                group.addTask {
                    do {
                        try await clock.sleep(for: delay)
                        return .fillerDue
                    } catch {
                        return .fillerCancelled
                    }
                }
            }
            var results = [ToolResult?](repeating: nil, count: calls.count)
            var saidFiller = false
            var pending = calls.count
            while pending > 0, let child = await group.next() {
                switch child {
                case .tool(let index, let result):
                    results[index] = result
                    pending -= 1
                    events.yield(.toolCallFinished(calls[index], output: result.output, isError: result.isError))
                case .fillerDue:
                    saidFiller = true
                    progress?.noteSaid()
                    events.yield(.filler(options.fillerLine))
                case .fillerCancelled:
                    break
                }
            }
            group.cancelAll()
            return (results, saidFiller)
        }
        fillerSpoken = fillerSpoken || saidFiller
        try Task.checkCancellation()
        return results.map { $0 ?? ToolResult(output: "Error: the tool did not run.", isError: true) }
    }
}
