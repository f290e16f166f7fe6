import Foundation
import ParleyCore
import ParleyStore

/// What every route and session of a running server shares.
public struct ServerContext: Sendable {
    public var settings: ServerSettings
    /// Agents, instances, conversations and items: SQLite, or PostgreSQL in cluster mode.
    public var store: any ParleyStore
    public var authentication: RequestAuthentication
    public var metrics: Metrics
    public var log: EventLog
    public var sessions: LiveSessions
    /// The engines new sessions run on (empty until they are ready).
    public var providers: ProviderHandle
    /// The WebRTC calls (`POST /v1/realtime/calls`) and their UDP endpoint.
    public var calls: WebRTCCalls
    /// Call recordings: where they are written, and which are being written.
    public var recordings: CallRecordings
    /// Exports per-turn traces when an OTLP endpoint is configured.
    public var traces: OTLPTraceExporter?
    /// How this node works with the others: alone, or as one node of a PostgreSQL cluster.
    var coordinator: any SessionCoordinator
}
