import Foundation
import ParleyStore

/// What a node does to its own live sessions when asked — by its own routes, or in a cluster by
/// another node's command: cancel the response in progress, end the session, let go of an
/// instance another connection took over, report the session's live status; and end a deleted
/// conversation's sessions and remove its recording.
struct NodeCommands: Sendable {
    let sessions: LiveSessions
    let recordings: CallRecordings

    /// Carries out a command another node sent.
    func carryOut(_ command: ClusterCommand) async -> ClusterCommandOutcome {
        let acted: Bool
        switch command.kind {
        case .interrupt: acted = await interrupt(instanceID: command.instanceID)
        case .end: acted = await end(instanceID: command.instanceID)
        case .release: acted = await release(instanceID: command.instanceID, claimsBefore: command.epoch)
        case .endConversation: acted = await endConversation(command.instanceID)
        case .interruptSession: acted = await interrupt(sessionID: command.instanceID)
        case .endSession: acted = await end(sessionID: command.instanceID)
        case .status:
            guard let status = sessions.status(instanceID: command.instanceID) else { return .notConnected }
            return .status(status)
        }
        return acted ? .done : .notConnected
    }

    /// Cancels the response in progress of the instance's newest session (should an older
    /// one still be closing). Returns whether there was one.
    func interrupt(instanceID: String) async -> Bool {
        guard let current = entries(of: instanceID).max(by: { ($0.claimEpoch ?? 0) < ($1.claimEpoch ?? 0) }) else { return false }
        await current.session.cancelResponse()
        return true
    }

    /// Cancels the response in progress of session `sessionID`. Returns whether it runs here.
    func interrupt(sessionID: String) async -> Bool {
        guard let entry = sessions.entry(sessionID: sessionID) else { return false }
        await entry.session.cancelResponse()
        return true
    }

    /// Closes session `sessionID` and its connection. Returns whether it ran here.
    func end(sessionID: String) async -> Bool {
        guard let entry = sessions.entry(sessionID: sessionID) else { return false }
        await close(entry)
        return true
    }

    /// Closes the instance's sessions and their connections. Returns whether there were any.
    func end(instanceID: String) async -> Bool {
        let entries = entries(of: instanceID)
        for entry in entries { await close(entry) }
        return !entries.isEmpty
    }

    /// Closes the instance's sessions whose claim is older than `epoch`.
    private func release(instanceID: String, claimsBefore epoch: Int64) async -> Bool {
        let superseded = entries(of: instanceID).filter { ($0.claimEpoch ?? 0) < epoch }
        for entry in superseded { await close(entry) }
        return !superseded.isEmpty
    }

    /// Closes the conversation's sessions on this node. Returns whether there were any.
    @discardableResult
    func endSessions(conversationID: String) async -> Bool {
        let entries = sessions.all.filter { $0.conversationID == conversationID }
        for entry in entries { await close(entry) }
        return !entries.isEmpty
    }

    /// Ends this node's sessions of a conversation and removes its recording here, if any.
    private func endConversation(_ conversationID: String) async -> Bool {
        let endedSessions = await endSessions(conversationID: conversationID)
        let removedRecording = (try? await recordings.delete(conversationID: conversationID)) ?? false
        return endedSessions || removedRecording
    }

    private func entries(of instanceID: String) -> [LiveSessions.Entry] {
        sessions.all.filter { $0.instanceID == instanceID }
    }

    private func close(_ entry: LiveSessions.Entry) async {
        await entry.session.close()
        entry.disconnect()
    }
}
