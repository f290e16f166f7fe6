import Foundation
import ParleyCore
import ParleyNet
import ParleyRTC
import ParleyStore
import ParleySync

/// A running Parley server: the realtime endpoint, the REST API, the web client and metrics on
/// one port, with its store (SQLite, or PostgreSQL in cluster mode).
///
/// ```swift
/// let app = try ParleyApp(settings: settings, secret: secret)
/// try app.start()
/// app.providersReady(try await ProviderFactory.make(settings))
/// ```
public final class ParleyApp: Sendable {
    /// What routes and sessions share.
    public let context: ServerContext
    private let server: HTTPServer
    private let housekeeping: RecordingHousekeeping
    /// The SIP door, once `start()` opened it (when `PARLEY_SIP_PORT` is set).
    private let sip = Locked<SIPDoor?>(nil)
    /// The backend's hold on SIP calls (accept, reject, refer, hang up).
    private let sipCalls = SIPCallControl()
    /// The calls this server placed (`POST /v1/calls`).
    private let placedCalls = SIPOutboundCalls()

    /// Opens the store (unless one is given) and prepares the routes; nothing listens until `start()`.
    /// - Parameters:
    ///   - store: the store to use; by default the one `settings` name (`ServerSettings.openStore()`).
    /// - Throws: when the data directory or the database cannot be opened.
    public init(
        settings: ServerSettings, secret: String, store: ServerStore? = nil, providers: ProviderSet? = nil, log: EventLog = EventLog()
    ) throws {
        try FileManager.default.createDirectory(at: settings.dataDirectory, withIntermediateDirectories: true)
        let opened = try store ?? settings.openStore()
        let sessions = LiveSessions(limits: LiveSessions.Limits(
            maximum: settings.maximumSessions, perUser: settings.maximumSessionsPerUser, perToken: settings.maximumSessionsPerToken
        ))
        let recordings = CallRecordings(dataDirectory: settings.dataDirectory, recordsByDefault: settings.recordsCalls, log: log)
        let coordinator: any SessionCoordinator = switch opened {
        case .local(let store):
            LocalCoordinator(sessions: sessions, store: store, recordings: recordings, tokenMintsPerMinute: settings.tokenMintsPerMinute)
        case .shared(let store):
            ClusterCoordinator(store: store, sessions: sessions, recordings: recordings, settings: settings, secret: secret, log: log)
        }
        context = ServerContext(
            settings: settings, store: opened.store, authentication: RequestAuthentication(secret: secret),
            metrics: Metrics(), log: log, sessions: sessions, providers: ProviderHandle(providers),
            calls: WebRTCCalls(settings: RTCEndpoint.Settings(
                host: settings.host, port: settings.webRTCPort,
                setupTimeout: settings.webRTCSetupTimeout, silenceTimeout: settings.webRTCSilenceTimeout,
                publicAddress: settings.webRTCPublicAddress
            )),
            recordings: recordings,
            traces: settings.tracing.map { OTLPTraceExporter(configuration: $0, log: log) },
            coordinator: coordinator
        )
        context.traces?.start()
        housekeeping = RecordingHousekeeping(recordings: context.recordings, limits: settings.recordingLimits, log: log)
        var router = Router()
        let context = self.context
        HealthRoutes.register(on: &router, context: context)
        MetricsRoute.register(on: &router, context: context)
        StatusRoute.register(on: &router, context: context)
        TokenRoutes.register(on: &router, context: context)
        AgentRoutes.register(on: &router, context: context)
        InstanceRoutes.register(on: &router, context: context)
        ConversationRoutes.register(on: &router, context: context)
        ConsoleRoutes.register(on: &router, context: context)
        router.webSocket("/v1/realtime", RealtimeEndpoint.route(context: context))
        RealtimeCallsRoute.register(on: &router, context: context)
        TwilioRoutes.register(on: &router, context: context)
        SIPCallRoutes.register(on: &router, control: sipCalls, context: context)
        SIPOutboundCallRoutes.register(on: &router, calls: placedCalls, door: { [sip] in sip.withLock { $0 } }, context: context)

        var configuration = HTTPServer.Configuration()
        configuration.host = settings.host
        configuration.port = settings.port
        configuration.staticRoot = settings.webRoot
        configuration.tls = settings.tls
        configuration.maxWebSocketMessageSize = 16 << 20
        configuration.additionalRequestHeaders.append("x-twilio-signature")
        // Proxy headers lws does not parse, so that local tokens can refuse proxied requests.
        configuration.additionalRequestHeaders += ["forwarded", "x-forwarded-port", "x-forwarded-server", "x-real-ip"]
        server = HTTPServer(configuration: configuration, router: router)
    }

    /// Binds and starts serving, and keeps the recordings within their limits (`RecordingHousekeeping`).
    /// - Throws: when the HTTP port, or the SIP port when configured, cannot be bound.
    public func start() throws {
        try server.start()
        if context.settings.sip.port != nil {
            let door = try SIPDoor(settings: context.settings.sip, control: sipCalls, context: context)
            sip.withLock { $0 = door }
        }
        housekeeping.start()
    }

    /// The port SIP listens on (UDP and TCP), when the SIP door is open.
    public var sipPort: Int? { sip.withLock { $0?.port } }

    /// The port the server listens on.
    public var port: Int { server.port }

    /// Makes the providers available; `/readyz` answers 200 from now on.
    public func providersReady(_ providers: ProviderSet) { context.providers.set(providers) }

    /// In cluster mode, registers this node (at the port it listens on) and starts carrying out
    /// the commands other nodes send it; does nothing on a single node. Call after `start()`.
    /// - Throws: `PostgresError` when the node cannot be registered.
    public func joinCluster() async throws {
        try await context.coordinator.join(nodeURL: context.settings.nodeURL ?? "http://\(context.settings.host):\(port)")
    }

    /// Finishes in-flight requests, closes every socket, stops the providers and closes the
    /// store. The node drains first (new sessions refused; in a cluster, live ones given
    /// `drainSeconds` to end, see `ClusterCoordinator.drain()`) and leaves the cluster last.
    public func shutdown() async {
        await context.coordinator.drain()
        for entry in context.sessions.all { await entry.session.close() }
        await server.shutdown()
        context.calls.shutdown()
        sip.withLock { $0 }?.close()
        housekeeping.stop()
        await context.recordings.finishAll()
        await context.traces?.shutdown()
        await context.providers.current?.shutdown()
        await context.coordinator.leave()
        await context.store.close()
    }
}
