import Foundation
import ParleyNet

/// A cluster node's graceful stop, before its sockets close: the node is marked draining (its
/// heartbeat row and `/healthz`, answering 503, tell load balancers to send nothing more; new
/// sessions are refused on every door with `node_draining`, see `SessionAdmission`), and its live sessions get up to
/// `ServerSettings.drainSeconds` to end by themselves. Those still running afterwards are
/// closed by the shutdown; their instances wait for their clients to reconnect elsewhere.
enum NodeDrain {
    /// Drains the node; returns at once on a single node.
    static func run(context: ServerContext) async {
        guard let cluster = context.cluster else { return }
        await cluster.drain()
        let live = context.sessions.count
        context.log.log("node.draining", ["node": .string(cluster.nodeID), "sessions": .number(Double(live))])
        let deadline = ContinuousClock.now + .seconds(context.settings.drainSeconds)
        while context.sessions.count > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))
        }
        context.log.log("node.drained", ["node": .string(cluster.nodeID), "sessions_left": .number(Double(context.sessions.count))])
    }

}
