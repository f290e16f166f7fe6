import Foundation
import ParleyStore

/// Carries out, on the node that owns an instance, the commands other nodes send it: cancel
/// the response in progress, end the session, let go of an instance another connection
/// took over, or report the session's live status.
struct ClusterCommandHandler: Sendable {
    let sessions: LiveSessions

    func carryOut(_ command: ClusterCommand) async -> ClusterCommandOutcome {
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
        }
        return .done
    }

    private func close(_ entry: LiveSessions.Entry) async {
        await entry.session.close()
        entry.disconnect()
    }
}
