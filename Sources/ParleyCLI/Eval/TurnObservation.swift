import Foundation
import ParleyCore

/// What one caller turn showed, as the caller's client saw it.
struct TurnObservation: Sendable, Hashable {
    /// A tool the agent called during the reply.
    struct ToolCall: Sendable, Hashable {
        /// The tool's name.
        var name: String
        /// Its arguments, JSON text as the model wrote them (empty when the server sent none).
        var arguments: String
    }

    /// The server's verdict on speech over its reply (Parley's `parley.interruption`).
    struct InterruptionVerdict: Sendable, Hashable {
        /// Whether the speech stopped the reply.
        var interrupts: Bool
        /// Why, e.g. `backchannel` or `words`.
        var reason: String
        /// The words the server heard, when it transcribed them.
        var words: String?
    }

    /// What the server heard the caller say (its transcript, or the typed text).
    var heard: String?
    /// What the agent replied, as text or as the transcript of its speech.
    var reply = ""
    /// The tools called, in order.
    var toolCalls: [ToolCall] = []
    /// The agents the conversation was handed to (their ids), in order.
    var handoffs: [String] = []
    /// The names of the agents handed to, by id, where the server told them.
    var handoffNames: [String: String] = [:]
    /// Handoffs the server refused, each `agent id: why`.
    var refusedHandoffs: [String] = []
    /// From the caller's last audio (or typed text) sent to the reply's first audio, wall clock.
    var replyStartedAfterMs: Int?
    /// Milliseconds of reply audio received.
    var replyAudioMs = 0
    /// The reply's end: `completed`, `cancelled`, `incomplete` or `failed`.
    var responseStatus: String?
    /// When the caller interrupted (or spoke over the reply), how much of it it had heard, in milliseconds.
    var interruptedAtAudioMs: Int?
    /// Whether the caller spoke over the reply and left the server to judge it (server turn detection).
    var spokeOverReply = false
    /// The server's verdict on the caller's speech over the reply.
    var interruptionVerdict: InterruptionVerdict?
    /// What the server heard of the caller's speech over the reply, when it made a turn of it.
    var heardOverReply: String?
    /// Whether the server truncated the reply's item to what was heard.
    var truncated = false
    /// Why the turn could not be observed to its end, if it could not.
    var failure: String?
    /// From the turn's start to the reply's end, wall clock.
    var durationMs = 0

    /// An agent handed to, as reports name it: `Billing (agent_…)`, or its id alone.
    func handoffLabel(_ agentID: String) -> String {
        handoffNames[agentID].map { "\($0) (\(agentID))" } ?? agentID
    }

    /// Whether the reply was cut: the caller interrupted and the server cancelled or truncated it.
    var wasInterrupted: Bool {
        interruptedAtAudioMs != nil
            && (responseStatus == "cancelled" || responseStatus == "incomplete" || truncated || interruptionVerdict?.interrupts == true)
    }
}
