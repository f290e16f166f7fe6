import Foundation
import ParleyCore

/// The store as a session holding an instance claim sees it: every call goes to the
/// PostgreSQL store, but item writes carry the claim's epoch and are refused
/// (`ClusterError.staleOwner`) once a newer claim exists. The write locks the instance's row
/// (`FOR SHARE`) while it checks, so a claim and a write never interleave: a write either
/// lands before the new owner loads the history or is refused.
final class ClaimedInstanceStore: ParleyStore {
    private let store: PostgresStore
    private let claim: InstanceClaim

    init(store: PostgresStore, claim: InstanceClaim) {
        self.store = store
        self.claim = claim
    }

    func saveAgent(_ agent: AgentRecord) async throws { try await store.saveAgent(agent) }
    func agent(id: String) async throws -> AgentRecord? { try await store.agent(id: id) }
    func agents() async throws -> [AgentRecord] { try await store.agents() }
    func deleteAgent(id: String) async throws -> Bool { try await store.deleteAgent(id: id) }
    func saveInstance(_ instance: InstanceRecord) async throws { try await store.saveInstance(instance) }
    func instance(id: String) async throws -> InstanceRecord? { try await store.instance(id: id) }
    func setInstanceStatus(id: String, status: String) async throws { try await store.setInstanceStatus(id: id, status: status) }
    func setInstanceAgent(id: String, agentID: String) async throws { try await store.setInstanceAgent(id: id, agentID: agentID) }
    func ensureConversation(id: String, agentID: String?) async throws { try await store.ensureConversation(id: id, agentID: agentID) }
    func conversationExists(id: String) async throws -> Bool { try await store.conversationExists(id: id) }
    func items(conversationID: String) async throws -> [ItemRecord] { try await store.items(conversationID: conversationID) }
    func deleteConversation(id: String) async throws -> Bool { try await store.deleteConversation(id: id) }
    func saveCall(_ call: CallRecord) async throws { try await store.saveCall(call) }
    func calls(_ query: CallQuery) async throws -> CallPage { try await store.calls(query) }
    func calls(conversationID: String) async throws -> [CallRecord] { try await store.calls(conversationID: conversationID) }
    func callStartTimes(from: Date, before: Date) async throws -> [Date] { try await store.callStartTimes(from: from, before: before) }
    func saveTurnFigures(_ figures: TurnFiguresRecord) async throws { try await store.saveTurnFigures(figures) }
    func turnFigures(conversationID: String) async throws -> [TurnFiguresRecord] { try await store.turnFigures(conversationID: conversationID) }
    func turnFigures(from: Date, before: Date) async throws -> [TurnFiguresRecord] { try await store.turnFigures(from: from, before: before) }
    func close() async {}  // The server's store outlives the session.

    func appendItem(_ item: ItemRecord) async throws {
        let payload = try String(decoding: JSONEncoder().encode(item.message), as: UTF8.self)
        let parameters = [
            item.id, item.conversationID, payload, String(item.createdAt.timeIntervalSince1970), claim.instanceID, String(claim.epoch), item.agentID,
        ]
        let written = try await store.pool.run { connection in
            try connection.query(
                "INSERT INTO items(id, conversation_id, message, created_at, agent_id) SELECT $1, $2, $3, $4::double precision, $7 "
                    + "WHERE EXISTS (SELECT 1 FROM instances WHERE id = $5 AND epoch = $6 FOR SHARE) "
                    + "ON CONFLICT(conversation_id, id) DO UPDATE SET message = excluded.message",
                parameters
            ).affectedRows
        }
        guard written == 1 else { throw staleOwner }
    }

    func deleteItem(conversationID: String, id: String) async throws -> Bool {
        let parameters = [id, claim.instanceID, String(claim.epoch), conversationID]
        let (deleted, current) = try await store.pool.run { connection in
            try connection.transaction {
                let current = try !connection.query(
                    "SELECT 1 FROM instances WHERE id = $1 AND epoch = $2 FOR SHARE", [parameters[1], parameters[2]]
                ).rows.isEmpty
                guard current else { return (false, false) }
                let deleted = try connection.query(
                    "DELETE FROM items WHERE conversation_id = $1 AND id = $2", [parameters[3], parameters[0]]
                ).affectedRows == 1
                return (deleted, true)
            }
        }
        guard current else { throw staleOwner }
        return deleted
    }

    private var staleOwner: ClusterError {
        ClusterError(code: .staleOwner, message: "Instance \(claim.instanceID) was taken over by another connection; this session may no longer change it.")
    }
}
