import Foundation

/// What an agent turn yields, in order.
///
/// A consumer speaks `.textDelta` and `.filler`, shows tool progress, and appends every
/// `.message` to the conversation store: together they are the turn's new messages.
public enum AgentEvent: Sendable, Hashable {
    /// More of the reply text, as the model writes it.
    case textDelta(String)
    /// A tool call is about to run.
    case toolCallStarted(ToolCall)
    /// A tool call ended with `output` (an error message when `isError`).
    case toolCallFinished(ToolCall, output: String, isError: Bool)
    /// A line to say because tools are taking long (at most once a turn). It is not in the
    /// turn's messages; a voice session speaks it and stores it as part of what was said.
    case filler(String)
    /// A message to append to the conversation: an assistant message (with its tool calls),
    /// a tool result, or the final assistant reply.
    case message(ChatMessage)
    /// One model request finished, with its reason and usage.
    case stepFinished(FinishReason, TokenUsage?)
    /// The turn is over; usage is summed over its steps when the provider reported it.
    case finished(FinishReason, TokenUsage?)
}

extension FinishReason {
    /// The agent stopped because the model was still calling tools after `AgentOptions.maxSteps`.
    public static let maxStepsReached = FinishReason.other("max_steps")
}
