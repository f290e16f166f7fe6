import Foundation
import ParleyStore

/// Publishes what this node's live sessions are doing (`listening`, `thinking`, `speaking`,
/// `tool_running`) in the cluster registry, so the operator console of every node shows them
/// (`PostgresCluster.publishSessionStates`). It writes when a session starts, ends or changes
/// its state — at most once per `interval`, however often states change — and tries again
/// `retryInterval` after a failed write.
final class SessionStatePublisher: Sendable {
    /// The shortest time between two writes.
    static let interval = Duration.milliseconds(250)
    /// How long it waits after a failed write before it tries again.
    static let retryInterval = Duration.seconds(2)

    private let changes: AsyncStream<Void>.Continuation
    private let publishing: Task<Void, Never>
    private let sessions: LiveSessions
    /// The token of the observation of `sessions`.
    private let observation: Int

    /// Starts publishing `sessions`' states through `cluster`, beginning with the current ones.
    init(sessions: LiveSessions, cluster: PostgresCluster, log: EventLog) {
        // One pending change is enough: the write reads the newest states.
        let (stream, changes) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.changes = changes
        self.sessions = sessions
        publishing = Task {
            var published: [String: String]?
            for await _ in stream {
                let states = sessions.states
                var pause = Self.interval
                if states != published {
                    do {
                        try await cluster.publishSessionStates(states)
                        published = states
                    } catch {
                        log.log("cluster.session_states_unpublished", ["problem": .string("\(error)")])
                        pause = Self.retryInterval
                        changes.yield()
                    }
                }
                try? await Task.sleep(for: pause)
            }
        }
        changes.yield()
        observation = sessions.observeStates { changes.yield() }
    }

    /// Stops publishing (the node leaves the cluster).
    func stop() {
        sessions.stopObserving(observation)
        changes.finish()
        publishing.cancel()
    }
}
