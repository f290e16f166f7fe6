import ParleyCore

/// What a `RealtimeTransport` asks of its connection after a session event or a clear.
enum RealtimeTransportAction: Sendable {
    /// Send a server event to the client (and the sideband sockets).
    case send(RealtimeServerEvent)
    /// Cut an assistant item to the speech the client actually got.
    case truncate(itemID: String, audioEndMs: Int)
}
