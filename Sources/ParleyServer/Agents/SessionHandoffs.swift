import Foundation
import ParleyCore
import ParleySync

/// The handoffs of one session: the tools of whichever agent holds it (its own, its door's and
/// its transfer tools), and the switch to a target agent when the model calls a transfer tool.
/// The target is read from the store at that moment, so one deleted since is refused.
final class SessionHandoffs: Sendable {
    /// Where prepared handoffs wait for the session (and how many the turn has had).
    let desk = AgentHandoffs()
    /// The agent the session started as (`nil`: the server's default agent).
    let startingAgentID: String?
    private let context: ServerContext
    private let engines: ProviderSet

    private struct State {
        /// Tools of the door every agent of the session has (a phone call's hang-up and transfer).
        var doorTools: [any Tool] = []
        /// Whether push-to-talk agents take turns by silence (a phone has no button).
        var takesTurnsBySilence = false
        /// The definitions of the agents handed to, as read then.
        var targets: [String: AgentDefinition] = [:]
    }

    private let state = Locked(State())

    init(context: ServerContext, engines: ProviderSet, startingAgentID: String?) {
        self.startingAgentID = startingAgentID
        self.context = context
        self.engines = engines
    }

    /// The server tools `agent` has in this session: its own, the door's, and one transfer tool
    /// per handoff.
    func tools(of agent: AgentDefinition) -> ToolRegistry {
        var registry = AgentTools.registry(for: agent)
        for tool in state.withLock({ $0.doorTools }) { registry.register(tool) }
        for handoff in agent.handoffs ?? [] { registry.register(TransferToAgentTool(source: agent, handoff: handoff, handoffs: self)) }
        return registry
    }

    /// Makes the session a phone call's: every agent holding it gets `doorTools`, and takes turns
    /// by silence.
    func usePhone(doorTools: [any Tool]) {
        state.withLock { state in
            state.doorTools = doorTools
            state.takesTurnsBySilence = true
        }
    }

    /// The definition of `agentID` as read when the session was handed to it.
    func definition(of agentID: String) -> AgentDefinition? {
        state.withLock { $0.targets[agentID] }
    }

    /// Prepares the session's switch from `source` to the target of `handoff` and leaves it on
    /// the desk.
    /// - Returns: the tool result for the model.
    /// - Throws: `ToolError` saying why the handoff was refused (the target is gone or invalid,
    ///   or the turn had too many handoffs); the refusal is reported, logged and counted.
    func transfer(from source: AgentDefinition, to handoff: AgentDefinition.HandoffSpecification) async throws -> String {
        let sourceID = source.id ?? "default"
        func refuse(_ problem: String) -> ToolError {
            desk.refuse(AgentHandoffReport(fromAgent: sourceID, toAgent: handoff.agentID, reason: handoff.description, configuration: nil, error: problem))
            context.log.log("agent.handoff_refused", ["from": .string(sourceID), "to": .string(handoff.agentID), "problem": .string(problem)])
            context.metrics.handoffTried(outcome: "refused")
            return ToolError("Not handed off: \(problem)")
        }
        let target: AgentDefinition
        do {
            guard let record = try await context.store.agent(id: handoff.agentID) else { throw refuse("there is no agent \(handoff.agentID) any more.") }
            target = try AgentRoutes.decode(record)
        } catch let error as ToolError {
            throw error
        } catch {
            throw refuse("the agent \(handoff.agentID) could not be read.")
        }
        let problems = target.validationProblems()
        guard problems.isEmpty else { throw refuse("the agent \(handoff.agentID) is not valid (\(problems.joined(separator: "; "))).") }
        let profile = AgentSessionProfile(agent: target, settings: context.settings)
        let takesTurnsBySilence = state.withLock { $0.takesTurnsBySilence }
        let handoverSwitch = AgentSwitch(
            fromAgent: sourceID, toAgent: profile.agentID, reason: handoff.description,
            reconfigure: { configuration in
                profile.apply(to: &configuration)
                if takesTurnsBySilence, configuration.turnDetection == nil { configuration.turnDetection = ServerVADSettings() }
            },
            tools: tools(of: target), model: profile.model(engines: engines), agentOptions: profile.agentOptions,
            summarizesHistory: source.summarizesHandoffHistory
        )
        guard desk.propose(handoverSwitch) else {
            throw refuse("this turn already had \(desk.limitPerTurn) handoffs, the most one turn may have. Answer the caller yourself.")
        }
        state.withLock { $0.targets[profile.agentID] = target }
        context.log.log("agent.handoff", ["from": .string(sourceID), "to": .string(profile.agentID)])
        context.metrics.handoffTried(outcome: "handed_off")
        return "Handed off to \(target.name ?? profile.agentID): that agent answers the caller now."
    }
}
