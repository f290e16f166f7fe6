import Foundation

extension RealtimeItem {
    /// The chat message this item stands for, or `nil` when it holds nothing a model can read
    /// (user audio without a transcript yet, an empty message).
    ///
    /// User parts become text and image parts (audio by its transcript); assistant and system
    /// messages join their texts and transcripts; an `incomplete` assistant message is marked
    /// interrupted; a function call becomes an assistant message with one tool call; a function
    /// call output becomes a tool message.
    public var chatMessage: ChatMessage? {
        switch kind {
        case .message(.user, let content):
            let parts: [ContentPart] = content.compactMap { part in
                if case .inputImage(let url) = part { return .imageURL(url) }
                guard let text = part.text, !text.isEmpty else { return nil }
                return .text(text)
            }
            return parts.isEmpty ? nil : .user(parts)
        case .message(.assistant, let content):
            let text = Self.joinedText(content)
            guard !text.isEmpty else { return nil }
            return .assistant(text: text, interrupted: status == .incomplete)
        case .message(.system, let content):
            let text = Self.joinedText(content)
            return text.isEmpty ? nil : .system(text)
        case .functionCall(let callID, let name, let arguments):
            return .assistant(text: "", toolCalls: [ToolCall(id: callID, name: name, arguments: arguments)])
        case .functionCallOutput(let callID, let output):
            return .tool(callID: callID, content: output)
        case .mcpListTools, .mcpCall, .mcpApprovalRequest, .mcpApprovalResponse:
            // MCP items reach the conversation through the session's tool calls, not as messages.
            return nil
        }
    }

    /// The realtime items for a chat message, with fresh ids: an assistant message with tool
    /// calls gives its message item (when it has text) and one `function_call` item per call.
    ///
    /// - Parameters:
    ///   - message: The chat message.
    ///   - spoken: Whether assistant text was spoken (`output_audio` with a transcript) rather
    ///     than written (`output_text`).
    public static func items(for message: ChatMessage, spoken: Bool) -> [RealtimeItem] {
        switch message {
        case .system(let text):
            return [.message(id: RealtimeID.item(), role: .system, content: [.inputText(text)], status: .completed)]
        case .user(let parts):
            let content: [RealtimeContentPart] = parts.map { part in
                switch part {
                case .text(let text): .inputText(text)
                case .imageURL(let url): .inputImage(url: url)
                }
            }
            return [.message(id: RealtimeID.item(), role: .user, content: content, status: .completed)]
        case .assistant(let text, let toolCalls, let interrupted):
            var items: [RealtimeItem] = []
            // A reply cut off before a word was heard is still an (empty) message item.
            if !text.isEmpty || toolCalls.isEmpty {
                let part: RealtimeContentPart = spoken ? .outputAudio(audio: nil, transcript: text) : .outputText(text)
                items.append(.message(
                    id: RealtimeID.item(), role: .assistant, content: [part], status: interrupted ? .incomplete : .completed
                ))
            }
            for call in toolCalls {
                items.append(.functionCall(
                    id: RealtimeID.item(), callID: call.id, name: call.name, arguments: call.arguments, status: .completed
                ))
            }
            return items
        case .tool(let callID, let content):
            return [.functionCallOutput(id: RealtimeID.item(), callID: callID, output: content, status: .completed)]
        }
    }

    private static func joinedText(_ content: [RealtimeContentPart]) -> String {
        content.compactMap(\.text).filter { !$0.isEmpty }.joined(separator: " ")
    }
}
