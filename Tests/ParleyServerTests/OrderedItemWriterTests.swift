import Foundation
import ParleyCore
@testable import ParleyServer
@testable import ParleyStore
import ParleySync
import Testing

/// The one writer every door stores its session's items with: in order, each follow-up after
/// its own write, failures reported, and a superseded session storing nothing more.
@Suite struct OrderedItemWriterTests {
    @Test func writesOneAtATimeInOrderAndEachFollowUpSeesItsWriteDone() async {
        let store = ScriptedItemStore(appendDelay: .milliseconds(20))
        let writer = OrderedItemWriter(store: store, conversationID: "conv") { item, _ in Issue.record("\(item.id) failed") }
        let seen = Recorded<[String]>()
        writer.append(Self.item("a")) { seen.append(store.operations) }
        writer.delete(itemID: "a") { seen.append(store.operations) }
        writer.append(Self.item("b"))
        writer.append(Self.item("c")) { seen.append(store.operations) }
        await writer.finish()
        #expect(store.operations == ["append a", "delete a", "append b", "append c"])
        #expect(seen.all == [["append a"], ["append a", "delete a"], ["append a", "delete a", "append b", "append c"]])
        #expect(store.mostAtOnce == 1)
    }

    @Test func aFailedWriteIsReportedBeforeItsFollowUpAndTheWriterGoesOn() async {
        let store = ScriptedItemStore(failing: ["b": CocoaError(.fileWriteUnknown)])
        let heard = Recorded<String>()
        let writer = OrderedItemWriter(store: store, conversationID: "conv") { item, failure in
            guard case .storeFailed = failure else {
                Issue.record("\(failure)")
                return
            }
            heard.append("failed \(item.id)")
        }
        writer.append(Self.item("a"))
        writer.append(Self.item("b")) { heard.append("after b") }
        writer.append(Self.item("c")) { heard.append("after c") }
        await writer.finish()
        #expect(heard.all == ["failed b", "after b", "after c"])
        #expect(store.operations == ["append a", "append c"])
    }

    @Test func aStaleOwnerSupersedesTheSessionAndNothingMoreIsStored() async {
        let store = ScriptedItemStore(failing: ["b": ClusterError(code: .staleOwner, message: "taken over")])
        let heard = Recorded<String>()
        let writer = OrderedItemWriter(store: store, conversationID: "conv") { item, failure in
            guard case .superseded = failure else {
                Issue.record("\(failure)")
                return
            }
            heard.append("superseded at \(item.id)")
        }
        writer.append(Self.item("a"))
        writer.append(Self.item("b"))
        writer.delete(itemID: "a") { heard.append("after delete") }
        writer.append(Self.item("c")) { heard.append("after c") }
        await writer.finish()
        #expect(heard.all == ["superseded at b", "after delete", "after c"])
        #expect(store.operations == ["append a"])
    }

    @Test func finishWaitsForTheLastWrite() async {
        let store = ScriptedItemStore(appendDelay: .milliseconds(100))
        let writer = OrderedItemWriter(store: store, conversationID: "conv") { _, _ in }
        writer.append(Self.item("a"))
        await writer.finish()
        #expect(store.operations == ["append a"])
    }

    private static func item(_ id: String) -> ItemRecord {
        ItemRecord(id: id, conversationID: "conv", message: .user(id), createdAt: Date())
    }
}

/// Values recorded from any task, in the order they came.
private final class Recorded<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }

    var all: [Value] { values.withLock { $0 } }
}

/// A store of items only, recording each write; `failing` names items whose append throws.
private final class ScriptedItemStore: ParleyStore {
    private struct State {
        var operations: [String] = []
        var running = 0
        var mostAtOnce = 0
    }

    private let state = Locked(State())
    private let failing: [String: any Error]
    private let appendDelay: Duration

    init(failing: [String: any Error] = [:], appendDelay: Duration = .zero) {
        self.failing = failing
        self.appendDelay = appendDelay
    }

    /// The writes done so far, in order.
    var operations: [String] { state.withLock { $0.operations } }
    /// The most writes that were under way at once.
    var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }

    func appendItem(_ item: ItemRecord) async throws {
        state.withLock {
            $0.running += 1
            $0.mostAtOnce = max($0.mostAtOnce, $0.running)
        }
        defer { state.withLock { $0.running -= 1 } }
        try? await Task.sleep(for: appendDelay)
        if let error = failing[item.id] { throw error }
        state.withLock { $0.operations.append("append \(item.id)") }
    }

    func deleteItem(conversationID: String, id: String) async throws -> Bool {
        state.withLock { $0.operations.append("delete \(id)") }
        return true
    }

    func saveAgent(_ agent: AgentRecord) async throws {}
    func agent(id: String) async throws -> AgentRecord? { nil }
    func agents() async throws -> [AgentRecord] { [] }
    func deleteAgent(id: String) async throws -> Bool { false }
    func saveInstance(_ instance: InstanceRecord) async throws {}
    func instance(id: String) async throws -> InstanceRecord? { nil }
    func setInstanceStatus(id: String, status: String) async throws {}
    func setInstanceAgent(id: String, agentID: String) async throws {}
    func ensureConversation(id: String, agentID: String?) async throws {}
    func conversationExists(id: String) async throws -> Bool { true }
    func items(conversationID: String) async throws -> [ItemRecord] { [] }
    func deleteConversation(id: String) async throws -> Bool { false }
    func saveCall(_ call: CallRecord) async throws {}
    func calls(_ query: CallQuery) async throws -> CallPage { CallPage(calls: [], nextCursor: nil) }
    func calls(conversationID: String) async throws -> [CallRecord] { [] }
    func callStartTimes(from: Date, before: Date) async throws -> [Date] { [] }
    func saveTurnFigures(_ figures: TurnFiguresRecord) async throws {
        state.withLock { $0.operations.append("figures \(figures.responseID)") }
    }
    func turnFigures(conversationID: String) async throws -> [TurnFiguresRecord] { [] }
    func turnFigures(from: Date, before: Date) async throws -> [TurnFiguresRecord] { [] }
    func close() async {}
}
