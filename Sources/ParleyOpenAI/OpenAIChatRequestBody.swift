import Foundation
import ParleyCore

/// Builds the JSON body of a streaming `/chat/completions` request.
enum OpenAIChatRequestBody {
    /// The body for `request` with `model`, plus `extraFields` (a server's own extensions)
    /// where they do not clash with a standard field.
    static func encode(_ request: ChatRequest, model: String, extraFields: [String: JSONValue] = [:]) throws -> Data {
        var body: [String: JSONValue] = [
            "model": .string(model),
            "messages": .array(request.messages.map(message)),
            "stream": true,
            "stream_options": ["include_usage": true],
        ]
        if !request.tools.isEmpty {
            body["tools"] = .array(request.tools.map { tool in
                [
                    "type": "function",
                    "function": ["name": .string(tool.name), "description": .string(tool.description), "parameters": tool.parameters],
                ]
            })
            if let choice = request.toolChoice { body["tool_choice"] = toolChoice(choice) }
        }
        if let temperature = request.temperature { body["temperature"] = .number(temperature) }
        if let maxTokens = request.maxTokens { body["max_tokens"] = .number(Double(maxTokens)) }
        // llama.cpp's name (vLLM and Ollama's native API call it alike); only sent when set.
        if let penalty = request.repetitionPenalty { body["repeat_penalty"] = .number(penalty) }
        body.merge(extraFields) { standard, _ in standard }
        return try JSONEncoder().encode(JSONValue.object(body))
    }

    /// What ends an interrupted assistant reply, so the model sees it was cut off: a dash, as
    /// a transcript marks speech broken off. (A note in words, like "[interrupted by the
    /// user]", was copied by small models into their later replies, and spoken.)
    static let interruptionMark = "—"

    static func message(_ message: ChatMessage) -> JSONValue {
        switch message {
        case .system(let text):
            return ["role": "system", "content": .string(text)]
        case .user(let parts):
            if parts.count == 1, case .text(let text) = parts[0] {
                return ["role": "user", "content": .string(text)]
            }
            return ["role": "user", "content": .array(parts.map { part in
                switch part {
                case .text(let text): ["type": "text", "text": .string(text)]
                case .imageURL(let url): ["type": "image_url", "image_url": ["url": .string(url)]]
                }
            })]
        case .assistant(let text, let toolCalls, let interrupted):
            var fields: [String: JSONValue] = ["role": "assistant"]
            let content = interrupted ? text + interruptionMark : text
            fields["content"] = content.isEmpty && !toolCalls.isEmpty ? .null : .string(content)
            if !toolCalls.isEmpty {
                fields["tool_calls"] = .array(toolCalls.map { call in
                    ["id": .string(call.id), "type": "function", "function": ["name": .string(call.name), "arguments": .string(call.arguments)]]
                })
            }
            return .object(fields)
        case .tool(let callID, let content):
            return ["role": "tool", "tool_call_id": .string(callID), "content": .string(content)]
        }
    }

    static func toolChoice(_ choice: ToolChoice) -> JSONValue {
        switch choice {
        case .auto: "auto"
        case .none: "none"
        case .required: "required"
        case .function(let name): ["type": "function", "function": ["name": .string(name)]]
        }
    }
}
