import Foundation
import ParleyCore

/// What `FakeOpenAIServer` does for one `/v1/chat/completions` request.
public struct FakeChatScript: Sendable {
    /// One piece of a scripted event stream.
    public enum Step: Sendable, Hashable {
        /// A chunk with a content delta.
        case text(String)
        /// A chunk with one tool-call fragment.
        case toolCallFragment(index: Int, id: String?, name: String?, arguments: String)
        /// A chunk with an empty delta and this `finish_reason`.
        case finish(String)
        /// The usage chunk (empty `choices`).
        case usage(promptTokens: Int, completionTokens: Int)
        /// `data: [DONE]`.
        case done
        /// Bytes sent exactly as given (malformed chunks, comments, odd framing).
        case raw(String)
        /// A chunk holding an `error` object.
        case error(message: String, type: String?, code: String?)
        /// Waits before the next step.
        case pause(Duration)
        /// Sends no more data until the client goes away; an SSE comment (`: stalled`) goes out
        /// every 25 ms, which clients must not take for progress, so the server notices the
        /// client leaving (it only learns of a closed connection when it writes).
        case stall
        /// Ends the body here, without `[DONE]`.
        case disconnect
    }

    /// The response status.
    public var status: Int
    /// Extra response header fields.
    public var headers: [String: String]
    /// The event stream for a 2xx status.
    public var steps: [Step]
    /// The body for an error status.
    public var errorBody: String
    /// How long to wait before sending the response head.
    public var delayBeforeHead: Duration
    /// How long to wait between the head and the first step.
    public var timeToFirstChunk: Duration
    /// How long to wait between consecutive steps.
    public var interChunkDelay: Duration

    /// Creates a script.
    public init(
        status: Int = 200,
        headers: [String: String] = [:],
        steps: [Step] = [],
        errorBody: String = "",
        delayBeforeHead: Duration = .zero,
        timeToFirstChunk: Duration = .zero,
        interChunkDelay: Duration = .zero
    ) {
        self.status = status
        self.headers = headers
        self.steps = steps
        self.errorBody = errorBody
        self.delayBeforeHead = delayBeforeHead
        self.timeToFirstChunk = timeToFirstChunk
        self.interChunkDelay = interChunkDelay
    }

    /// A complete text reply: `pieces` as content chunks, `finish_reason: stop`, usage, `[DONE]`.
    public static func text(_ pieces: [String], usage: TokenUsage? = TokenUsage(promptTokens: 10, completionTokens: 5)) -> FakeChatScript {
        var steps = pieces.map { Step.text($0) } + [.finish("stop")]
        if let usage { steps.append(.usage(promptTokens: usage.promptTokens, completionTokens: usage.completionTokens)) }
        return FakeChatScript(steps: steps + [.done])
    }

    /// A complete reply calling `calls`, each streamed as fragments: id and name first, then the
    /// arguments in pieces of `argumentPieceLength`. With `repeatIDs`, every fragment repeats
    /// the id and name, as some providers do.
    public static func toolCalls(_ calls: [ToolCall], argumentPieceLength: Int = 5, repeatIDs: Bool = false) -> FakeChatScript {
        var steps: [Step] = []
        for (index, call) in calls.enumerated() {
            steps.append(.toolCallFragment(index: index, id: call.id, name: call.name, arguments: ""))
            var rest = Substring(call.arguments)
            while !rest.isEmpty {
                let piece = String(rest.prefix(max(1, argumentPieceLength)))
                rest = rest.dropFirst(max(1, argumentPieceLength))
                steps.append(.toolCallFragment(
                    index: index,
                    id: repeatIDs ? call.id : nil,
                    name: repeatIDs ? call.name : nil,
                    arguments: piece
                ))
            }
        }
        return FakeChatScript(steps: steps + [.finish("tool_calls"), .done])
    }

    /// An error response with an OpenAI-style body.
    public static func error(status: Int, message: String, type: String? = nil, code: String? = nil) -> FakeChatScript {
        var detail: [String: JSONValue] = ["message": .string(message)]
        detail["type"] = type.map { .string($0) } ?? .null
        detail["code"] = code.map { .string($0) } ?? .null
        return FakeChatScript(status: status, errorBody: JSONValue.object(["error": .object(detail)]).jsonText)
    }

    /// A script that streams `steps` as given.
    public static func stream(_ steps: [Step]) -> FakeChatScript {
        FakeChatScript(steps: steps)
    }
}

extension FakeChatScript.Step {
    /// The bytes this step puts on the wire; `nil` for steps that are not data.
    var frame: Data? {
        func chunk(delta: JSONValue, finishReason: JSONValue = .null) -> Data {
            let chunk: JSONValue = [
                "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                "choices": [["index": 0, "delta": delta, "finish_reason": finishReason]],
            ]
            return Data("data: \(chunk.jsonText)\n\n".utf8)
        }
        switch self {
        case .text(let text):
            return chunk(delta: ["content": .string(text)])
        case .toolCallFragment(let index, let id, let name, let arguments):
            var function: [String: JSONValue] = ["arguments": .string(arguments)]
            if let name { function["name"] = .string(name) }
            var fragment: [String: JSONValue] = ["index": .number(Double(index)), "function": .object(function)]
            if let id {
                fragment["id"] = .string(id)
                fragment["type"] = "function"
            }
            return chunk(delta: ["tool_calls": [.object(fragment)]])
        case .finish(let reason):
            return chunk(delta: [:], finishReason: .string(reason))
        case .usage(let prompt, let completion):
            let usage: JSONValue = [
                "id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [],
                "usage": ["prompt_tokens": .number(Double(prompt)), "completion_tokens": .number(Double(completion)),
                          "total_tokens": .number(Double(prompt + completion))],
            ]
            return Data("data: \(usage.jsonText)\n\n".utf8)
        case .done:
            return Data("data: [DONE]\n\n".utf8)
        case .raw(let text):
            return Data(text.utf8)
        case .error(let message, let type, let code):
            let error: JSONValue = ["error": ["message": .string(message), "type": type.map { .string($0) } ?? .null,
                                              "code": code.map { .string($0) } ?? .null]]
            return Data("data: \(error.jsonText)\n\n".utf8)
        case .pause, .stall, .disconnect:
            return nil
        }
    }
}
