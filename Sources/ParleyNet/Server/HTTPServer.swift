import Foundation
import ParleySync

/// Why an `HTTPServer` could not start.
public enum HTTPServerError: Error, Sendable, Equatable {
    /// libwebsockets could not create the listening socket (address in use, bad host, bad
    /// certificate files).
    case bindFailed(host: String, port: Int)
    /// `start()` was called twice.
    case alreadyStarted
}

/// An HTTP/1.1 and WebSocket server on libwebsockets, with async handlers.
///
/// One dedicated thread services the sockets; handlers run as tasks. Call `shutdown()` when
/// done: it stops that thread.
///
/// ```swift
/// var router = Router()
/// router.get("/healthz") { _ in .text("ok") }
/// let server = HTTPServer(configuration: .init(port: 0), router: router)
/// try server.start()
/// print("listening on", server.port)
/// await server.shutdown()
/// ```
public final class HTTPServer: Sendable {
    private let core: HTTPServerCore
    private let started = Locked(false)

    /// Creates a server; nothing listens until `start()`.
    public init(configuration: Configuration = Configuration(), router: Router) {
        core = HTTPServerCore(configuration: configuration, router: router)
    }

    /// The configuration the server was created with.
    public var configuration: Configuration { core.configuration }

    /// Binds the port and starts serving on a dedicated thread.
    /// - Throws: `HTTPServerError.bindFailed` when the address cannot be bound.
    public func start() throws {
        try started.withLock { started in
            guard !started else { throw HTTPServerError.alreadyStarted }
            HeapRetention.applied
            try core.start()
            started = true
        }
    }

    /// The bound port (the real one when the configuration asked for 0); 0 before `start()`.
    public var port: Int { core.port }

    /// Stops gracefully: new requests get 503, in-flight requests get up to
    /// `shutdownGracePeriod` to finish, WebSockets are closed with 1001, then the socket closes.
    public func shutdown() async {
        guard started.withLock({ $0 }), let loop = core.loop else { return }
        core.isDraining = true
        _ = await core.exchanges.waitUntilIdle(timeout: .seconds(core.configuration.shutdownGracePeriod))
        loop.schedule(CloseWebSockets(core: core))
        _ = await core.webSockets.waitUntilIdle(timeout: .seconds(2))
        await loop.stop()
    }
}

/// Service-thread work that starts closing every WebSocket of a server.
private final class CloseWebSockets: ServiceThreadWork {
    let core: HTTPServerCore

    init(core: HTTPServerCore) {
        self.core = core
    }

    func runOnServiceThread() -> Bool {
        core.closeAllWebSockets()
        return true
    }
}
