import Foundation
import ParleyCore

/// A scripted upstream model that answers what it is asked, for whole-system tests where real
/// clients hold a conversation through Parley: set it with
/// `FakeOpenAIServer.setChatResponder(FakeConversationalChat.reply(to:))`.
///
/// Reads the `/chat/completions` request body and answers:
/// - after a tool result: "The tool said: <result>."
/// - a tool call when tools are offered and `tool_choice` names one, is `required`, or is `auto`
///   (or absent) and the question mentions the weather: `get_weather` (or the named tool) with
///   `{"city": …}` taken from "… in <City>", Paris by default; for "what time" with `auto`, the
///   built-in `get_current_time` with no arguments;
/// - "long story": 200 sentences, one every 40 ms, so there is something to interrupt;
/// - anything else: "You said: <the last user message>.", so turns can be told apart.
public enum FakeConversationalChat {
    /// The script answering the chat request `body`.
    public static func reply(to body: JSONValue) -> FakeChatScript {
        let messages = elements(of: body["messages"])
        if let last = messages.last, last["role"]?.stringValue == "tool" {
            return .text(words("The tool said: \(text(of: last))."))
        }
        let question = messages.last { $0["role"]?.stringValue == "user" }.map(text(of:)) ?? ""
        if let tool = toolToCall(body, question: question) {
            let arguments = tool == "get_current_time" ? "{}" : JSONValue.object(["city": .string(city(in: question))]).jsonText
            return .toolCalls([ToolCall(id: "call_\(UUID().uuidString.prefix(8).lowercased())", name: tool, arguments: arguments)])
        }
        if question.lowercased().contains("long story") {
            let sentences = (1...200).map { "This is sentence number \($0) of a very long story. " }
            var script = FakeChatScript.text(sentences)
            script.interChunkDelay = .milliseconds(40)
            return script
        }
        if question.isEmpty { return .text(words("Hello from the fake model.")) }
        let asked = question.trimmingCharacters(in: CharacterSet(charactersIn: ".?! "))
        return .text(words("You said: \(asked)."))
    }

    /// The tool the model calls for this request, if any.
    static func toolToCall(_ body: JSONValue, question: String) -> String? {
        let offered = elements(of: body["tools"]).compactMap { $0["function"]?["name"]?.stringValue }
        guard !offered.isEmpty else { return nil }
        switch body["tool_choice"] {
        case .string("none")?:
            return nil
        case .string("required")?:
            return offered.contains("get_weather") ? "get_weather" : offered[0]
        case .object(let choice)?:
            return choice["function"]?["name"]?.stringValue.flatMap { offered.contains($0) ? $0 : nil }
        default:
            let lowered = question.lowercased()
            if lowered.contains("weather"), offered.contains("get_weather") { return "get_weather" }
            if lowered.contains("what time"), offered.contains("get_current_time") { return "get_current_time" }
            return nil
        }
    }

    /// The text of a chat message, whether its content is a string or a list of parts.
    static func text(of message: JSONValue) -> String {
        switch message["content"] {
        case .string(let text)?: return text
        case .array(let parts)?: return parts.compactMap { $0["text"]?.stringValue }.joined(separator: " ")
        default: return ""
        }
    }

    /// The word after "in " in `question`, capitalised, or Paris.
    static func city(in question: String) -> String {
        let words = question.split(whereSeparator: { !$0.isLetter })
        guard let index = words.firstIndex(where: { $0.lowercased() == "in" }), index + 1 < words.count else { return "Paris" }
        return words[index + 1].capitalized
    }

    /// The elements of `value` when it is an array, else none.
    static func elements(of value: JSONValue?) -> [JSONValue] {
        if case .array(let elements)? = value { elements } else { [] }
    }

    /// `text` as word-sized content deltas, as a model streams it.
    static func words(_ text: String) -> [String] {
        text.split(separator: " ").enumerated().map { $0.offset == 0 ? String($0.element) : " " + $0.element }
    }
}
