import Foundation
import ParleyCore
import Testing
@testable import ParleyOpenAI

@Suite struct OpenAIChunkDecodingTests {
    static func assemble(_ chunks: [String]) throws -> [LanguageModelEvent] {
        var assembler = OpenAIChatStreamAssembler()
        var events: [LanguageModelEvent] = []
        for chunk in chunks {
            events += assembler.consume(try #require(OpenAIChatChunk(json: Data(chunk.utf8))))
        }
        return events + assembler.finish()
    }

    @Test func textAndUsage() throws {
        let events = try Self.assemble([
            #"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            #"{"choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"system_fingerprint":"fp"}"#,
            #"{"choices":[{"index":0,"delta":{"content":"lo"}}]}"#,
            #"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
            #"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":0}}}"#,
        ])
        #expect(events == [.textDelta("Hel"), .textDelta("lo"), .finished(.stop, TokenUsage(promptTokens: 12, completionTokens: 2))])
    }

    @Test func toolCallsAreAssembledByIndex() throws {
        let events = try Self.assemble([
            #"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"calculate","arguments":"{\"ex"}}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"pression\":\"1+1\"}"}}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ])
        #expect(events == [
            .toolCall(ToolCall(id: "call_a", name: "get_weather", arguments: #"{"city":"Paris"}"#)),
            .toolCall(ToolCall(id: "call_b", name: "calculate", arguments: #"{"expression":"1+1"}"#)),
            .finished(.toolCalls, nil),
        ])
    }

    @Test func repeatedIdAndNameAreNotConcatenated() throws {
        let events = try Self.assemble([
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"calculate","arguments":"{\"expression\""}}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"calculate","arguments":":\"2*3\"}"}}]}}]}"#,
            #"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ])
        #expect(events == [.toolCall(ToolCall(id: "call_1", name: "calculate", arguments: #"{"expression":"2*3"}"#)), .finished(.toolCalls, nil)])
    }

    @Test func fragmentsWithoutIndexAndMissingIds() throws {
        let events = try Self.assemble([
            #"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","arguments":"{}"}}]}}]}"#,
            #"{"choices":[{"delta":{"tool_calls":[{"id":"second","function":{"name":"b","arguments":"{"}}]}}]}"#,
            #"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}"#,
        ])
        #expect(events == [
            .toolCall(ToolCall(id: "call_0", name: "a", arguments: "{}")),
            .toolCall(ToolCall(id: "second", name: "b", arguments: "{}")),
            .finished(.toolCalls, nil),
        ])
    }

    @Test func lenientDecoding() throws {
        let events = try Self.assemble([
            #"{"choices":null}"#,
            #"{"choices":[{"index":0,"delta":{"content":42}}]}"#,
            #"{"choices":[{"index":0,"delta":null,"finish_reason":null}],"usage":"n/a"}"#,
            #"{"choices":[{"index":1,"delta":{"content":"other choice"}}]}"#,
            #"{"choices":[{"index":0,"delta":{"content":"ok","brand_new_field":{"x":[1]}}}],"extra":true}"#,
            #"{"choices":[{"index":0,"delta":{},"finish_reason":"brand_new_reason"}]}"#,
        ])
        #expect(events == [.textDelta("ok"), .finished(.other("brand_new_reason"), nil)])
    }

    @Test func numbersAreWholeAndNeverBooleans() throws {
        let object = try #require(JSONSerialization.jsonObject(with: Data(#"{"a":3,"b":1.5,"c":true,"d":"4","e":false,"f":0}"#.utf8)) as? [String: Any])
        #expect(LenientJSON.integer(object["a"]) == 3)
        #expect(LenientJSON.integer(object["b"]) == nil)
        #expect(LenientJSON.integer(object["c"]) == nil)
        #expect(LenientJSON.integer(object["d"]) == nil)
        #expect(LenientJSON.integer(object["f"]) == 0)
        #expect(LenientJSON.value(object["c"]) == .bool(true))
        #expect(LenientJSON.value(object["e"]) == .bool(false))
        #expect(LenientJSON.value(object["f"]) == .number(0))
        #expect(LenientJSON.value(object["b"]) == .number(1.5))
    }

    @Test func inStreamErrorIsDecoded() throws {
        let chunk = try #require(OpenAIChatChunk(
            json: Data(#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#.utf8)
        ))
        #expect(chunk.error == OpenAIErrorDetail(message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota"))
        let plain = try #require(OpenAIChatChunk(json: Data(#"{"error":"model crashed"}"#.utf8)))
        #expect(plain.error == OpenAIErrorDetail(message: "model crashed"))
    }

    @Test func requestBody() throws {
        let request = ChatRequest(
            messages: [
                .system("sys"),
                .user([.text("what is this?"), .imageURL("data:image/png;base64,AAAA")]),
                .assistant(text: "", toolCalls: [ToolCall(id: "c1", name: "calculate", arguments: "{}")]),
                .tool(callID: "c1", content: "4"),
                .assistant(text: "It is fo", interrupted: true),
                .user("go on"),
            ],
            tools: [ToolDefinition(name: "calculate", description: "math", parameters: ["type": "object"])],
            toolChoice: .function("calculate"),
            temperature: 0.5,
            maxTokens: 100
        )
        let body = try JSONValue(parsing: String(decoding: try OpenAIChatRequestBody.encode(request, model: "m"), as: UTF8.self))
        let expected: JSONValue = [
            "model": "m",
            "stream": true,
            "stream_options": ["include_usage": true],
            "temperature": 0.5,
            "max_tokens": 100,
            "tool_choice": ["type": "function", "function": ["name": "calculate"]],
            "tools": [["type": "function", "function": ["name": "calculate", "description": "math", "parameters": ["type": "object"]]]],
            "messages": [
                ["role": "system", "content": "sys"],
                ["role": "user", "content": [
                    ["type": "text", "text": "what is this?"],
                    ["type": "image_url", "image_url": ["url": "data:image/png;base64,AAAA"]],
                ]],
                ["role": "assistant", "content": nil, "tool_calls": [
                    ["id": "c1", "type": "function", "function": ["name": "calculate", "arguments": "{}"]],
                ]],
                ["role": "tool", "tool_call_id": "c1", "content": "4"],
                ["role": "assistant", "content": "It is fo—"],
                ["role": "user", "content": "go on"],
            ],
        ]
        #expect(body == expected)
    }

    @Test func retryDelaysGrowAndRespectRetryAfter() {
        let policy = OpenAIRetryPolicy(maxAttempts: 5, initialBackoff: .milliseconds(100), maxBackoff: .seconds(1), jitter: 0)
        #expect(policy.delay(after: 1, retryAfter: nil) == .milliseconds(100))
        #expect(policy.delay(after: 3, retryAfter: nil) == .milliseconds(400))
        #expect(policy.delay(after: 10, retryAfter: nil) == .seconds(1))
        #expect(policy.delay(after: 1, retryAfter: .milliseconds(700)) == .milliseconds(700))
        let jittered = OpenAIRetryPolicy(initialBackoff: .milliseconds(100), jitter: 0.5)
        for _ in 0..<50 {
            let delay = jittered.delay(after: 1, retryAfter: nil)
            #expect(delay > .milliseconds(50) && delay <= .milliseconds(100))
        }
    }
}
