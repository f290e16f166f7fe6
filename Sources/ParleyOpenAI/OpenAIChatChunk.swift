import Foundation
import ParleyCore

/// One `chat.completion.chunk` of a streamed reply, decoded leniently: every field is optional,
/// and a field of an unexpected type reads as absent instead of failing the chunk.
struct OpenAIChatChunk: Decodable, Sendable {
    var choices: [Choice]
    var usage: Usage?
    var error: OpenAIErrorDetail?

    struct Choice: Decodable, Sendable {
        var index: Int?
        var delta: Delta?
        var finishReason: String?

        enum CodingKeys: String, CodingKey {
            case index, delta
            case finishReason = "finish_reason"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            index = container.lenient(Int.self, .index)
            delta = container.lenient(Delta.self, .delta)
            finishReason = container.lenient(String.self, .finishReason)
        }
    }

    struct Delta: Decodable, Sendable {
        var content: String?
        var toolCalls: [ToolCallFragment]

        enum CodingKeys: String, CodingKey {
            case content
            case toolCalls = "tool_calls"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            content = container.lenient(String.self, .content)
            toolCalls = container.lenient([ToolCallFragment].self, .toolCalls) ?? []
        }
    }

    struct ToolCallFragment: Decodable, Sendable {
        var index: Int?
        var id: String?
        var name: String?
        var arguments: String?

        enum CodingKeys: String, CodingKey {
            case index, id, function
        }

        enum FunctionKeys: String, CodingKey {
            case name, arguments
        }

        init(index: Int?, id: String?, name: String?, arguments: String?) {
            self.index = index
            self.id = id
            self.name = name
            self.arguments = arguments
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            index = container.lenient(Int.self, .index)
            id = container.lenient(String.self, .id)
            if let function = try? container.nestedContainer(keyedBy: FunctionKeys.self, forKey: .function) {
                name = function.lenient(String.self, .name)
                arguments = function.lenient(String.self, .arguments)
            }
        }
    }

    struct Usage: Decodable, Sendable {
        var promptTokens: Int?
        var completionTokens: Int?

        enum CodingKeys: String, CodingKey {
            case promptTokens = "prompt_tokens"
            case completionTokens = "completion_tokens"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            promptTokens = container.lenient(Int.self, .promptTokens)
            completionTokens = container.lenient(Int.self, .completionTokens)
        }
    }

    enum CodingKeys: String, CodingKey {
        case choices, usage, error
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        choices = container.lenient([Choice].self, .choices) ?? []
        usage = container.lenient(Usage.self, .usage)
        error = container.contains(.error) ? OpenAIErrorDetail(errorMember: container.lenient(JSONValue.self, .error)) : nil
    }
}

extension KeyedDecodingContainer {
    /// The value for `key`, or `nil` when it is missing, `null` or of another type.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}
