import Foundation
import ParleyStore

/// Carries out, on the node that owns an instance, the commands other nodes send it: cancel
/// the response in progress, end the session, let go of an instance another connection
/// took over, or report the session's live status; and, on every node, end a deleted
/// conversation's sessions and remove its recording.
struct ClusterCommandHandler: Sendable {
    let sessions: LiveSessions
    let recordings: CallRecordings

    func carryOut(_ command: ClusterCommand) async -> ClusterCommandOutcome {
        if command.kind == .endConversation { return await endConversation(command.instanceID) }
        let entries = sessions.all.filter { $0.instanceID == command.instanceID }
        switch command.kind {
        case .interrupt:
            // The newest claim's session, should an older one still be closing.
            guard let current = entries.max(by: { ($0.claimEpoch ?? 0) < ($1.claimEpoch ?? 0) }) else { return .notConnected }
            await current.session.cancelResponse()
        case .end:
            guard !entries.isEmpty else { return .notConnected }
            for entry in entries { await close(entry) }
        case .status:
            guard let status = sessions.status(instanceID: command.instanceID) else { return .notConnected }
            return .status(status)
        case .release:
            let superseded = entries.filter { ($0.claimEpoch ?? 0) < command.epoch }
            guard !superseded.isEmpty else { return .notConnected }
            for entry in superseded { await close(entry) }
        case .endConversation:
            break
        }
        return .done
    }

    /// Ends this node's sessions of a conversation and removes its recording here, if any.
    private func endConversation(_ conversationID: String) async -> ClusterCommandOutcome {
        let entries = sessions.all.filter { $0.conversationID == conversationID }
        for entry in entries { await close(entry) }
        let removedRecording = (try? await recordings.delete(conversationID: conversationID)) ?? false
        return entries.isEmpty && !removedRecording ? .notConnected : .done
    }

    private func close(_ entry: LiveSessions.Entry) async {
        await entry.session.close()
        entry.disconnect()
    }
}
