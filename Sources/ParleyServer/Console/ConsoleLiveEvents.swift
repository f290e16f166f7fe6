import Foundation
import ParleyNet

/// `GET /v1/console/sessions/events`: the live sessions as a Server-Sent Events stream, so the
/// console's Live view updates without asking again. Each `sessions` event carries the whole
/// list (`ConsoleRoutes.liveSessions`, the shape of `GET /v1/console/sessions`): one at once,
/// then one whenever a session starts, ends or changes state on this node (at once, at most
/// every `minimumInterval`) or on another node (seen within `otherNodesInterval`). Durations
/// alone are no change: the page counts them up itself. A comment line every `keepAlive`
/// tells a proxy the stream is alive and the server that the page is gone. The stream ends
/// when the node starts draining (the page then asks again, and reaches another node), so it
/// never holds up a shutdown.
enum ConsoleLiveEvents {
    static let minimumInterval = Duration.milliseconds(250)
    static let otherNodesInterval = Duration.seconds(1)
    static let keepAlive = Duration.seconds(15)

    static func stream(context: ServerContext) -> AsyncStream<Data> {
        let (events, output) = AsyncStream.makeStream(of: Data.self, bufferingPolicy: .bufferingNewest(8))
        // One pending look is enough: each look reads the newest list.
        let (looks, look) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let observation = context.sessions.observeStates { look.yield() }
        let ticking = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: otherNodesInterval)
                look.yield()
            }
        }
        let sending = Task {
            var sent: Data?
            var failing = false
            var lastWrite = ContinuousClock.now
            for await _ in looks {
                if context.coordinator.isDraining {
                    output.finish()
                    return
                }
                do {
                    let sessions = try await ConsoleRoutes.liveSessions(context: context)
                    let signature = try signature(of: sessions)
                    if signature != sent || failing {
                        output.yield(Data("event: sessions\ndata: ".utf8) + (try JSONEncoder().encode(ConsoleViews.List(data: sessions))) + Data("\n\n".utf8))
                        sent = signature
                        lastWrite = .now
                    }
                    failing = false
                } catch {
                    if !failing {
                        let message = #"{"code":"storage_unavailable","message":"The live sessions could not be read; retrying."}"#
                        output.yield(Data("event: failure\ndata: \(message)\n\n".utf8))
                        lastWrite = .now
                    }
                    failing = true
                }
                if ContinuousClock.now - lastWrite >= keepAlive {
                    output.yield(Data(": alive\n\n".utf8))
                    lastWrite = .now
                }
                try? await Task.sleep(for: minimumInterval)
            }
        }
        look.yield()
        output.onTermination = { _ in
            context.sessions.stopObserving(observation)
            ticking.cancel()
            look.finish()
            sending.cancel()
        }
        return events
    }

    /// What makes two lists different for the page: everything but the durations.
    private static func signature(of sessions: [ConsoleViews.LiveSession]) throws -> Data {
        try JSONEncoder().encode(sessions.map { session in
            var session = session
            session.durationSeconds = 0
            return session
        })
    }
}
