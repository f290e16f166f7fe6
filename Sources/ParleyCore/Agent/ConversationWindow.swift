import Foundation

/// The part of a conversation sent with each request: the system prompt, then as many of the
/// newest messages as fit a message count and an estimated token budget.
///
/// Trimming never separates an assistant message's tool calls from their results: a call
/// without a result is dropped from the message, a result without its call is dropped, and
/// a call and its results are kept or dropped together. The newest exchange is always kept.
public struct ConversationWindow: Sendable, Hashable {
    /// The most messages kept after the system prompt.
    public var maxMessages: Int
    /// The most tokens, estimated with `TokenEstimate`, for the whole window including the system prompt.
    public var maxTokens: Int

    /// Creates a window.
    public init(maxMessages: Int = 40, maxTokens: Int = 8_000) {
        self.maxMessages = maxMessages
        self.maxTokens = maxTokens
    }

    /// The messages to send: `instructions` (when not empty) and the leading system messages of
    /// `history`, then the newest messages that fit.
    public func messages(instructions: String, history: [ChatMessage]) -> [ChatMessage] {
        var pinned: [ChatMessage] = instructions.isEmpty ? [] : [.system(instructions)]
        var rest = history[...]
        while case .system = rest.first, let first = rest.popFirst() { pinned.append(first) }

        let units = Self.units(of: rest)
        var budget = maxTokens - pinned.reduce(0) { $0 + TokenEstimate.tokens(in: $1) }
        var count = 0
        var kept: [[ChatMessage]] = []
        for unit in units.reversed() {
            let tokens = unit.reduce(0) { $0 + TokenEstimate.tokens(in: $1) }
            if !kept.isEmpty, count + unit.count > maxMessages || tokens > budget { break }
            kept.append(unit)
            count += unit.count
            budget -= tokens
        }
        return pinned + kept.reversed().flatMap { $0 }
    }

    /// Splits messages into units that must stay together: an assistant message with tool calls
    /// plus the results that follow it, or any single other message. Unpaired calls and results are dropped.
    static func units(of history: ArraySlice<ChatMessage>) -> [[ChatMessage]] {
        let messages = mergingAdjacentAssistantMessages(history)
        var units: [[ChatMessage]] = []
        var index = messages.startIndex
        while index < messages.endIndex {
            let message = messages[index]
            index += 1
            switch message {
            case .assistant(let text, let toolCalls, let interrupted) where !toolCalls.isEmpty:
                var results: [ChatMessage] = []
                var answered: Set<String> = []
                let callIDs = Set(toolCalls.map(\.id))
                while index < messages.endIndex, case .tool(let callID, _) = messages[index] {
                    if callIDs.contains(callID), answered.insert(callID).inserted { results.append(messages[index]) }
                    index += 1
                }
                let pairedCalls = toolCalls.filter { answered.contains($0.id) }
                if pairedCalls.isEmpty {
                    if !text.isEmpty { units.append([.assistant(text: text, interrupted: interrupted)]) }
                } else {
                    units.append([.assistant(text: text, toolCalls: pairedCalls, interrupted: interrupted)] + results)
                }
            case .tool:
                continue
            default:
                units.append([message])
            }
        }
        return units
    }
}

extension ConversationWindow {
    /// Joins runs of assistant messages into one: a realtime conversation keeps a reply's text
    /// and each of its function calls as items of their own, while chat APIs want one assistant
    /// message with all of a step's calls, followed by their results (and some servers refuse
    /// two assistant messages in a row).
    static func mergingAdjacentAssistantMessages(_ messages: ArraySlice<ChatMessage>) -> [ChatMessage] {
        var merged: [ChatMessage] = []
        merged.reserveCapacity(messages.count)
        for message in messages {
            if case .assistant(let text, let calls, let interrupted) = message,
               case .assistant(let previousText, let previousCalls, let previousInterrupted)? = merged.last {
                let joinedText = [previousText, text].filter { !$0.isEmpty }.joined(separator: " ")
                merged[merged.count - 1] = .assistant(
                    text: joinedText, toolCalls: previousCalls + calls, interrupted: previousInterrupted || interrupted
                )
            } else {
                merged.append(message)
            }
        }
        return merged
    }
}

/// A rough token count for budgeting: about four bytes of UTF-8 per token, plus a little per message.
public enum TokenEstimate {
    /// The estimated tokens of `message`, including its framing.
    public static func tokens(in message: ChatMessage) -> Int {
        let framing = 4
        switch message {
        case .system(let text):
            return framing + tokens(in: text)
        case .user(let parts):
            return parts.reduce(framing) { total, part in
                switch part {
                case .text(let text): total + tokens(in: text)
                case .imageURL: total + imageTokens
                }
            }
        case .assistant(let text, let toolCalls, _):
            return toolCalls.reduce(framing + tokens(in: text)) { $0 + 8 + tokens(in: $1.name) + tokens(in: $1.arguments) }
        case .tool(let callID, let content):
            return framing + tokens(in: callID) + tokens(in: content)
        }
    }

    /// The estimated tokens of `text`.
    public static func tokens(in text: String) -> Int {
        (text.utf8.count + 3) / 4
    }

    /// The flat estimate for one image.
    public static let imageTokens = 256
}
