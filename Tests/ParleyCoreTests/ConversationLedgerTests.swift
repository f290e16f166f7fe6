import Testing
@testable import ParleyCore

/// Where the conversation keeps a tool result that arrives after its response was interrupted.
@Suite struct ConversationLedgerTests {
    private static let call = ToolCall(id: "call_1", name: "slow_lookup", arguments: "{}")
    private static let result = ToolResult(output: "found", isError: false)

    @Test func aLateResultGoesRightAfterItsCallAndTheCallsOtherResults() {
        var ledger = ConversationLedger()
        ledger.upsert(id: "item_user", message: .user("Book a table"))
        ledger.upsert(id: "item_call", message: .assistant(text: "", toolCalls: [Self.call, ToolCall(id: "call_2", name: "other", arguments: "{}")]))
        ledger.upsert(id: "item_other", message: .tool(callID: "call_2", content: "done"))
        ledger.upsert(id: "item_next", message: .user("Did it work?"))
        let stored = ledger.keepLateToolResult(Self.result, of: Self.call)
        #expect(stored.map(\.message) == [.tool(callID: "call_1", content: "found")])
        #expect(ledger.items.map(\.id) == ["item_user", "item_call", "item_other", stored[0].id, "item_next"])
        #expect(ledger.items[3].isInternal)
        #expect(ledger.lastItemID == "item_next")
    }

    @Test func aLateResultOfACallNeverStoredIsKeptWithItsCall() {
        var ledger = ConversationLedger()
        ledger.upsert(id: "item_user", message: .user("Book a table"))
        let stored = ledger.keepLateToolResult(Self.result, of: Self.call)
        #expect(stored.map(\.message) == [.assistant(text: "", toolCalls: [Self.call]), .tool(callID: "call_1", content: "found")])
        #expect(ledger.items.map(\.id) == ["item_user"] + stored.map(\.id))
        #expect(ledger.items.filter(\.isInternal).map(\.id) == stored.map(\.id))
    }
}
