import Foundation
import Testing
@testable import ParleyCore

@Suite struct MemoryTests {
    static func call(_ id: String) -> ToolCall { ToolCall(id: id, name: "t", arguments: "{}") }

    @Test func keepsTheSystemPromptAndTheNewestMessages() {
        let history: [ChatMessage] = [.system("history prompt"), .user("1"), .assistant(text: "2"), .user("3"), .assistant(text: "4"), .user("5")]
        let window = ConversationWindow(maxMessages: 2, maxTokens: 10_000)
        #expect(window.messages(instructions: "sys", history: history)
            == [.system("sys"), .system("history prompt"), .assistant(text: "4"), .user("5")])
    }

    @Test func neverSplitsAToolCallFromItsResults() {
        let calls = [Self.call("a"), Self.call("b")]
        let history: [ChatMessage] = [
            .user("q"), .assistant(text: "", toolCalls: calls), .tool(callID: "a", content: "A"), .tool(callID: "b", content: "B"),
            .assistant(text: "answer"),
        ]
        // Three messages would cut between the call and its first result: the whole group goes.
        #expect(ConversationWindow(maxMessages: 3).messages(instructions: "s", history: history) == [.system("s"), .assistant(text: "answer")])
        #expect(ConversationWindow(maxMessages: 4).messages(instructions: "s", history: history)
            == [.system("s")] + history[1...])
    }

    @Test func dropsUnpairedCallsAndResults() {
        let history: [ChatMessage] = [
            .tool(callID: "orphan", content: "x"),
            .user("q"),
            .assistant(text: "checking", toolCalls: [Self.call("a"), Self.call("lost")]),
            .tool(callID: "a", content: "A"),
            .assistant(text: "", toolCalls: [Self.call("never")]),
            .user("again"),
        ]
        #expect(ConversationWindow().messages(instructions: "", history: history) == [
            .user("q"), .assistant(text: "checking", toolCalls: [Self.call("a")]), .tool(callID: "a", content: "A"), .user("again"),
        ])
    }

    @Test func respectsTheTokenBudgetButAlwaysKeepsTheNewestMessage() {
        let long = String(repeating: "word ", count: 400)  // ~500 tokens
        let history: [ChatMessage] = [.user(long), .assistant(text: long), .user(long)]
        let window = ConversationWindow(maxMessages: 100, maxTokens: 1_100)
        #expect(window.messages(instructions: "s", history: history) == [.system("s"), .assistant(text: long), .user(long)])
        #expect(ConversationWindow(maxMessages: 100, maxTokens: 10).messages(instructions: "s", history: history) == [.system("s"), .user(long)])
    }

    /// Random conversations, many window sizes: the invariants hold. Violations are collected
    /// and checked once, so the loop stays cheap.
    @Test func trimmingInvariants() {
        var random = SplitMix64(seed: 42)
        var violations: [String] = []
        for conversation in 0..<100 {
            let history = Self.randomConversation(using: &random)
            for maxMessages in [1, 2, 3, 5, 8, 13, 100] {
                for maxTokens in [20, 60, 200, 100_000] {
                    let window = ConversationWindow(maxMessages: maxMessages, maxTokens: maxTokens)
                    let messages = window.messages(instructions: "sys", history: history)
                    let body = Array(messages.dropFirst())
                    let label = "conversation \(conversation), \(maxMessages) messages, \(maxTokens) tokens"
                    if messages.first != .system("sys") { violations.append("\(label): no system prompt") }
                    if body.count > max(maxMessages, Self.lastUnitSize(of: history)) { violations.append("\(label): too many messages") }
                    if body.last != history.last { violations.append("\(label): newest message dropped") }
                    if let problem = Self.pairingProblem(in: body) { violations.append("\(label): \(problem)") }
                }
            }
        }
        #expect(violations.isEmpty, "\(violations.prefix(5))")
    }

    static func lastUnitSize(of history: [ChatMessage]) -> Int {
        ConversationWindow.units(of: history[...]).last?.count ?? 0
    }

    /// What breaks the pairing of tool calls and results in `messages`, or `nil`.
    static func pairingProblem(in messages: [ChatMessage]) -> String? {
        var open: Set<String> = []
        for message in messages {
            switch message {
            case .assistant(_, let calls, _):
                if !open.isEmpty { return "a call without its result" }
                open = Set(calls.map(\.id))
            case .tool(let id, _):
                if open.remove(id) == nil { return "a result without its call" }
            default:
                if !open.isEmpty { return "a call without its result" }
            }
        }
        return open.isEmpty ? nil : "a call without its result"
    }

    static func randomConversation(using random: inout SplitMix64) -> [ChatMessage] {
        var messages: [ChatMessage] = []
        var nextID = 0
        for _ in 0..<Int.random(in: 1...15, using: &random) {
            messages.append(.user(String(repeating: "x", count: Int.random(in: 1...120, using: &random))))
            if Bool.random(using: &random) {
                let calls = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    nextID += 1
                    return ToolCall(id: "c\(nextID)", name: "t", arguments: "{}")
                }
                messages.append(.assistant(text: "", toolCalls: calls))
                for call in calls where Int.random(in: 0..<10, using: &random) > 0 {
                    messages.append(.tool(callID: call.id, content: "r"))
                }
            }
            if Bool.random(using: &random) {
                messages.append(.assistant(text: String(repeating: "y", count: Int.random(in: 1...120, using: &random))))
            }
        }
        if Bool.random(using: &random) { messages.append(.tool(callID: "stray", content: "?")) }
        messages.append(.user("final"))
        return messages
    }

    @Test func storeAppendsAndTruncatesTheInterruptedReply() async throws {
        let store: any ConversationStore = InMemoryConversationStore()
        let call = Self.call("a")
        try await store.append([.user("tell me"), .assistant(text: "", toolCalls: [call]), .tool(callID: "a", content: "A")], to: "c1")
        try await store.append([.assistant(text: "Once upon a time there was a dragon.")], to: "c1")
        #expect(try await store.truncateLastAssistantMessage(in: "c1", heardText: "Once upon a"))
        #expect(try await store.messages(in: "c1") == [
            .user("tell me"), .assistant(text: "", toolCalls: [call]), .tool(callID: "a", content: "A"),
            .assistant(text: "Once upon a", interrupted: true),
        ])
        #expect(try await store.messages(in: "other") == [])
        #expect(try await !store.truncateLastAssistantMessage(in: "other", heardText: ""))
    }
}

/// A small seedable generator, so random tests repeat exactly.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
