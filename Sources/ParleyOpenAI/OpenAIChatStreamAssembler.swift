import Foundation
import ParleyCore

/// Turns the chunks of a streamed chat completion into `LanguageModelEvent`s: text as it comes,
/// tool calls assembled from their fragments, and the finish with usage.
///
/// Tool-call fragments are keyed by `index`. `id` and `name` normally arrive only in the first
/// fragment; providers that repeat them are handled (a repeat is never appended). A fragment
/// without an index continues the latest call unless it brings a new id.
struct OpenAIChatStreamAssembler {
    private struct PartialToolCall {
        var id: String?
        var name: String?
        var arguments = ""
    }

    private var calls: [Int: PartialToolCall] = [:]
    private var callOrder: [Int] = []
    private var toolCallsDelivered = false
    private(set) var finishReason: FinishReason?
    private var usage: TokenUsage?

    /// The events `chunk` completes.
    mutating func consume(_ chunk: OpenAIChatChunk) -> [LanguageModelEvent] {
        if let reported = chunk.usage, reported.promptTokens != nil || reported.completionTokens != nil {
            usage = TokenUsage(promptTokens: reported.promptTokens ?? 0, completionTokens: reported.completionTokens ?? 0)
        }
        guard let choice = chunk.choices.first(where: { ($0.index ?? 0) == 0 }) else { return [] }
        var events: [LanguageModelEvent] = []
        if let content = choice.delta?.content, !content.isEmpty {
            events.append(.textDelta(content))
        }
        for fragment in choice.delta?.toolCalls ?? [] {
            merge(fragment)
        }
        if let reason = choice.finishReason {
            finishReason = Self.finishReason(reason)
            events += deliverToolCalls()
        }
        return events
    }

    /// The events that end the reply: tool calls not yet delivered, then `.finished`.
    mutating func finish() -> [LanguageModelEvent] {
        let pending = deliverToolCalls()
        let reason = finishReason ?? (callOrder.isEmpty ? .stop : .toolCalls)
        return pending + [.finished(reason, usage)]
    }

    private mutating func merge(_ fragment: OpenAIChatChunk.ToolCallFragment) {
        let index: Int
        if let given = fragment.index {
            index = given
        } else if let last = callOrder.last, fragment.id == nil || fragment.id == calls[last]?.id {
            index = last
        } else {
            index = (callOrder.max() ?? -1) + 1
        }
        if calls[index] == nil {
            calls[index] = PartialToolCall()
            callOrder.append(index)
        }
        if let id = fragment.id, !id.isEmpty, calls[index]?.id == nil { calls[index]?.id = id }
        if let name = fragment.name, !name.isEmpty, calls[index]?.name == nil { calls[index]?.name = name }
        if let arguments = fragment.arguments { calls[index]?.arguments += arguments }
    }

    private mutating func deliverToolCalls() -> [LanguageModelEvent] {
        guard !toolCallsDelivered, !callOrder.isEmpty else { return [] }
        toolCallsDelivered = true
        return callOrder.sorted().enumerated().compactMap { position, index in
            guard let call = calls[index] else { return nil }
            return .toolCall(ToolCall(id: call.id ?? "call_\(position)", name: call.name ?? "", arguments: call.arguments))
        }
    }

    static func finishReason(_ raw: String) -> FinishReason {
        switch raw {
        case "stop", "end_turn", "eos": .stop
        case "length", "max_tokens": .length
        case "tool_calls", "function_call", "tool_use": .toolCalls
        case "content_filter": .contentFilter
        default: .other(raw)
        }
    }
}
