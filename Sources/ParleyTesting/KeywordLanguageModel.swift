import Foundation
import ParleyCore

/// A language model for end-to-end tests that answers by keyword, so each scenario gets the
/// reply it needs whatever order the scenarios run in.
///
/// - After a tool result: "The weather is <sky>." with the result's `sky` field.
/// - Tool choice `required` or a named function: calls that tool (the first one offered for
///   `required`), with `{"city":"Paris"}`.
/// - "weather" with a `get_weather` tool offered: calls it for Paris.
/// - "long story": 200 sentences, one every 40 ms (for interruption tests).
/// - Anything else: "Hello from Parley.", word by word.
public struct KeywordLanguageModel: LanguageModel {
    /// Creates the model.
    public init() {}

    public func stream(_ request: ChatRequest) -> AsyncThrowingStream<LanguageModelEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let reply = Self.reply(to: request)
                for event in reply.events {
                    if Task.isCancelled { break }
                    if reply.streamsSlowly { try? await Task.sleep(for: .milliseconds(40)) }
                    continuation.yield(event)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private static func reply(to request: ChatRequest) -> (events: [LanguageModelEvent], streamsSlowly: Bool) {
        let last = request.messages.last
        if case .tool(_, let content)? = last {
            let sky = (try? JSONValue(parsing: content))?["sky"]?.stringValue ?? "unknown"
            return (text("The weather is \(sky)."), false)
        }
        if let forced = forcedTool(request) {
            return ([.toolCall(ToolCall(id: "call_\(forced)_1", name: forced, arguments: #"{"city":"Paris"}"#)), .finished(.toolCalls, nil)], false)
        }
        guard case .user(let parts)? = last else { return (text("Hello from Parley."), false) }
        let said = parts.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined(separator: " ").lowercased()
        if said.contains("weather"), request.tools.contains(where: { $0.name == "get_weather" }) {
            return ([.toolCall(ToolCall(id: "call_weather_1", name: "get_weather", arguments: #"{"city":"Paris"}"#)), .finished(.toolCalls, nil)], false)
        }
        if said.contains("long story") {
            let sentences = (1...200).map { "This is sentence number \($0) of a very long story. " }
            return (sentences.map(LanguageModelEvent.textDelta) + [.finished(.stop, nil)], true)
        }
        return (text("Hello from Parley."), false)
    }

    /// The tool the request's tool choice makes the model call, if any.
    private static func forcedTool(_ request: ChatRequest) -> String? {
        switch request.toolChoice {
        case .required?: request.tools.first?.name
        case .function(let name)?: request.tools.contains { $0.name == name } ? name : nil
        default: nil
        }
    }

    private static func text(_ text: String) -> [LanguageModelEvent] {
        text.split(separator: " ", omittingEmptySubsequences: false).enumerated().map { index, word in
            .textDelta(index == 0 ? String(word) : " " + word)
        } + [.finished(.stop, TokenUsage(promptTokens: 10, completionTokens: 5))]
    }
}
