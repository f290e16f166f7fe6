import Foundation
import ParleyCore

/// One `chat.completion.chunk` of a streamed reply, decoded leniently: every field is optional,
/// and a field of an unexpected type reads as absent instead of failing the chunk.
///
/// Chunks arrive by the dozen per reply, so they are read from `JSONSerialization`'s objects,
/// about three times cheaper than `JSONDecoder` with `Decodable`.
struct OpenAIChatChunk: Sendable {
    var choices: [Choice]
    var usage: Usage?
    var error: OpenAIErrorDetail?

    struct Choice: Sendable {
        var index: Int?
        var delta: Delta?
        var finishReason: String?

        init(_ object: [String: Any]) {
            index = LenientJSON.integer(object["index"])
            delta = (object["delta"] as? [String: Any]).map(Delta.init)
            finishReason = object["finish_reason"] as? String
        }
    }

    struct Delta: Sendable {
        var content: String?
        var toolCalls: [ToolCallFragment]

        init(_ object: [String: Any]) {
            content = object["content"] as? String
            toolCalls = (object["tool_calls"] as? [Any])?.compactMap { ($0 as? [String: Any]).map(ToolCallFragment.init) } ?? []
        }
    }

    struct ToolCallFragment: Sendable {
        var index: Int?
        var id: String?
        var name: String?
        var arguments: String?

        init(index: Int?, id: String?, name: String?, arguments: String?) {
            self.index = index
            self.id = id
            self.name = name
            self.arguments = arguments
        }

        init(_ object: [String: Any]) {
            index = LenientJSON.integer(object["index"])
            id = object["id"] as? String
            let function = object["function"] as? [String: Any]
            name = function?["name"] as? String
            arguments = function?["arguments"] as? String
        }
    }

    struct Usage: Sendable {
        var promptTokens: Int?
        var completionTokens: Int?

        init(_ object: [String: Any]) {
            promptTokens = LenientJSON.integer(object["prompt_tokens"])
            completionTokens = LenientJSON.integer(object["completion_tokens"])
        }
    }

    /// Reads the JSON text of one chunk; `nil` when it is not a JSON object.
    init?(json: Data) {
        guard let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else { return nil }
        choices = (object["choices"] as? [Any])?.compactMap { ($0 as? [String: Any]).map(Choice.init) } ?? []
        usage = (object["usage"] as? [String: Any]).map(Usage.init)
        error = object.keys.contains("error") ? OpenAIErrorDetail(errorMember: LenientJSON.value(object["error"])) : nil
    }
}

/// Reads values out of `JSONSerialization`'s objects the way lenient decoding wants them.
enum LenientJSON {
    /// A whole number (not a boolean, not a fraction), or `nil`.
    static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        let double = number.doubleValue
        guard double.rounded() == double, abs(double) < 1e15 else { return nil }
        return Int(double)
    }

    /// The value as a `JSONValue`; `nil` for what JSON cannot hold.
    static func value(_ value: Any?) -> JSONValue? {
        switch value {
        case nil: return nil
        case is NSNull: return .null
        case let string as String: return .string(string)
        case let number as NSNumber: return isBoolean(number) ? .bool(number.boolValue) : .number(number.doubleValue)
        case let array as [Any]: return .array(array.map { Self.value($0) ?? .null })
        case let object as [String: Any]: return .object(object.compactMapValues { Self.value($0) })
        default: return nil
        }
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        // JSONSerialization makes `true` and `false` the C char type "c"; numbers never are.
        String(cString: number.objCType) == "c"
    }
}
