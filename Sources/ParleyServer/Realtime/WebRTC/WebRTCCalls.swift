import Foundation
import ParleyRTC

/// The server's WebRTC calls: the UDP endpoint, started with the first call (a server nobody
/// calls opens no UDP port and no thread), and the calls running now by id.
///
/// `@unchecked Sendable`: `endpoint` and `running` are guarded by `lock`.
public final class WebRTCCalls: @unchecked Sendable {
    private let settings: RTCEndpoint.Settings
    private let lock = NSLock()
    private var endpoint: RTCEndpoint?
    private var running: [String: RTCCall] = [:]
    private var connections: [String: RealtimeConnection] = [:]

    /// Creates the registry; nothing is bound until the first call.
    public init(settings: RTCEndpoint.Settings) {
        self.settings = settings
    }

    /// Starts a call answering `offer`.
    /// - Throws: `RTCError` when the UDP endpoint cannot start.
    func open(offer: SessionOffer) throws(RTCError) -> RTCCall {
        let call = try startedEndpoint().open(offer: offer)
        lock.withLock { running[call.id] = call }
        return call
    }

    private func startedEndpoint() throws(RTCError) -> RTCEndpoint {
        lock.lock()
        defer { lock.unlock() }
        if let endpoint { return endpoint }
        let started = try RTCEndpoint(settings: settings)
        endpoint = started
        return started
    }

    /// Records the realtime connection serving a call (for sideband sockets).
    func attach(_ connection: RealtimeConnection, to call: RTCCall) {
        attach(connection, callID: call.id)
    }

    /// Records the realtime connection serving a call of another door (a SIP call), for sideband sockets.
    func attach(_ connection: RealtimeConnection, callID: String) {
        lock.withLock { connections[callID] = connection }
    }

    /// Forgets the connection of a call of another door, which ended.
    func detach(callID: String) {
        lock.withLock { connections[callID] = nil }
    }

    /// The realtime connection serving the call `callID`, while it runs.
    func connection(callID: String) -> RealtimeConnection? {
        lock.withLock { connections[callID] }
    }

    /// Forgets a call that ended.
    func remove(_ call: RTCCall) {
        lock.withLock {
            running[call.id] = nil
            connections[call.id] = nil
        }
    }

    /// The UDP port of calls, once the endpoint has started.
    public var port: Int? { lock.withLock { endpoint?.port } }

    /// Calls running now.
    public var count: Int { lock.withLock { running.count } }

    /// Ends every call and closes the UDP endpoint.
    public func shutdown() {
        let endpoint = lock.withLock {
            defer { self.endpoint = nil }
            return self.endpoint
        }
        endpoint?.shutdown()
    }
}
