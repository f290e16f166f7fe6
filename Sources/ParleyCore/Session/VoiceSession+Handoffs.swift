import Foundation

/// The conversation before a handoff as the agent taking over reads it: one note written by
/// its model, standing for the items it covers.
struct HistorySummary: Sendable {
    /// The note, sent as a system message.
    var note: String
    /// The items the note stands for.
    var coveredItemIDs: Set<String>

    /// What the summarising model is asked.
    static let instructions = """
        You write handover notes between the agents of a voice service. Summarise the conversation \
        below for the agent taking over, in at most five short sentences: who the caller is, what they \
        want, what was already done or promised. Write only the summary.
        """

    /// The conversation as text for the summarising model, one line a message.
    static func transcript(of messages: [ChatMessage]) -> String {
        messages.compactMap { message -> String? in
            switch message {
            case .system: nil
            case .user(let parts): "Caller: " + parts.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined(separator: " ")
            case .assistant(let text, let calls, _):
                text.isEmpty && calls.isEmpty ? nil : "Agent: " + ([text] + calls.map { "[called \($0.name)]" }).filter { !$0.isEmpty }.joined(separator: " ")
            case .tool(_, let content): "Tool result: " + content
            }
        }.joined(separator: "\n")
    }

    /// Asks `model` to summarise `messages`; what it wrote so far (or nothing) when it fails.
    static func write(of messages: [ChatMessage], with model: any LanguageModel) async -> String {
        let request = ChatRequest(messages: [.system(instructions), .user(transcript(of: messages))], maxTokens: 300)
        var summary = ""
        do {
            for try await event in model.stream(request) {
                if case .textDelta(let delta) = event { summary += delta }
            }
        } catch {
            // A failed summary leaves the note saying less; the handoff goes on.
        }
        return "Summary of the conversation before you took over: " + summary.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

// Handoffs: a transfer tool the model called prepared an `AgentSwitch`; once the response has
// ended the session goes on as the target agent, which answers at once, in the same turn.
extension VoiceSession {
    /// The providers with the agent's parts (tools, model, loop settings) of the agent holding
    /// the session now.
    var agentProviders: VoiceSessionProviders {
        guard let agent = handedOverAgent else { return providers }
        var current = providers
        current.tools = agent.tools
        current.model = agent.model
        current.agentOptions = agent.agentOptions
        return current
    }

    /// The conversation as the agent holding the session reads it: whole, or the summary of the
    /// items before its handoff followed by the items since.
    var conversationForModel: [ChatMessage] {
        guard let summary = historySummary else { return ledger.messages }
        return [.system(summary.note)] + ledger.items.filter { !summary.coveredItemIDs.contains($0.id) }.compactMap(\.message)
    }

    /// Carries out the handoff waiting on the desk, if any: the session takes the target's
    /// settings, tools and model, reports it, and (when the response that called the transfer
    /// completed) the target answers now.
    func handOverIfAsked(afterResponseEnded status: ResponseStatus) {
        reportRefusedHandoffs()
        guard !isClosed, let handoff = providers.handoffs?.takePending() else { return }
        handedOverAgent = handoff
        var reconfigured = configuration
        handoff.reconfigure(&reconfigured)
        update(configuration: reconfigured)
        emit(.agentHandoff(AgentHandoffReport(
            fromAgent: handoff.fromAgent, toAgent: handoff.toAgent, reason: handoff.reason, configuration: reconfigured, error: nil
        )))
        guard handoff.summarizesHistory else {
            historySummary = nil
            if status == .completed { continueAfterHandoff() }
            return
        }
        let covered = Set(ledger.items.map(\.id))
        let messages = conversationForModel
        let answers = status == .completed
        tasks.start { [weak self] in
            let note = await HistorySummary.write(of: messages, with: handoff.model)
            await self?.useSummary(HistorySummary(note: note, coveredItemIDs: covered), thenAnswer: answers)
        }
    }

    /// Makes `summary` what the agent reads of the conversation before its handoff, then lets it
    /// answer unless something else started a response meanwhile.
    private func useSummary(_ summary: HistorySummary, thenAnswer answers: Bool) {
        guard !isClosed else { return }
        historySummary = summary
        if answers, responses.current == nil, transcriptions.waitingResponse == nil { continueAfterHandoff() }
    }

    /// The agent taking over answers, in the turn of the handoff.
    private func continueAfterHandoff() {
        startResponse(trigger: clock.now, transcriptionMs: nil, recognizedSeconds: nil, request: ResponseRequest(), continuesHandoff: true)
    }

    /// Reports the handoffs the desk refused since the last report.
    func reportRefusedHandoffs() {
        for refusal in providers.handoffs?.takeRefusals() ?? [] { emit(.agentHandoff(refusal)) }
    }
}
