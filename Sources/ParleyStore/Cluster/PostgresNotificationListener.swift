import CLibPQ
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One dedicated PostgreSQL connection that LISTENs on a channel, on a thread of its own,
/// and hands every notification's payload to `onNotification`. When the connection is lost
/// (the server restarted) it reconnects — at once, then after 20 ms, twice as long each time
/// up to 1 s — LISTENs again and calls `onListening`, so its owner can rescan what it may
/// have missed meanwhile (NOTIFY is not queued for a listener that is away).
///
/// `@unchecked Sendable`: `isStopped` is guarded by `lock`; the connection is only touched
/// on the listener's thread.
final class PostgresNotificationListener: @unchecked Sendable {
    private let url: String
    private let channel: String
    private let onNotification: @Sendable (String) -> Void
    private let onListening: @Sendable () -> Void
    private let lock = NSLock()
    private var isStopped = false

    /// Prepares a listener on `channel` (a name of letters, digits and `_`); nothing
    /// connects until `start()`.
    init(url: String, channel: String, onNotification: @escaping @Sendable (String) -> Void, onListening: @escaping @Sendable () -> Void) {
        self.url = url
        self.channel = channel
        self.onNotification = onNotification
        self.onListening = onListening
    }

    /// Starts the listener's thread.
    func start() {
        Thread { [self] in
            Thread.current.name = "parley-postgres-listen"  // From inside: Foundation names only the running thread.
            listen()
        }.start()
    }

    /// Stops listening within a quarter of a second; the connection closes with the thread.
    func stop() { lock.withLock { isStopped = true } }

    private var stopped: Bool { lock.withLock { isStopped } }

    private func listen() {
        var delay = Duration.milliseconds(20)
        var connection: PostgresConnection?
        while !stopped {
            guard let open = connection else {
                do {
                    let fresh = try PostgresConnection(url: url)
                    try fresh.execute("LISTEN \"\(channel)\"")
                    connection = fresh
                    delay = .milliseconds(20)
                    onListening()
                } catch {
                    usleep(useconds_t(delay / .microseconds(1)))
                    delay = min(delay * 2, .seconds(1))
                }
                continue
            }
            guard let payloads = Self.awaitNotifications(on: open, milliseconds: 250) else {
                connection = nil  // Lost: reconnect and LISTEN again on the next pass.
                continue
            }
            payloads.forEach(onNotification)
        }
    }

    /// Waits up to `milliseconds` for the connection's socket, then reads what arrived.
    /// - Returns: the notifications' payloads (often none); `nil` when the connection is lost.
    private static func awaitNotifications(on connection: PostgresConnection, milliseconds: Int32) -> [String]? {
        let socket = PQsocket(connection.handle)
        guard socket >= 0 else { return nil }
        var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, milliseconds)
        guard ready >= 0 || errno == EINTR else { return nil }
        guard ready > 0 else { return [] }
        guard PQconsumeInput(connection.handle) == 1, connection.isConnected else { return nil }
        var payloads: [String] = []
        while let notification = PQnotifies(connection.handle) {
            payloads.append(String(cString: notification.pointee.extra))
            PQfreemem(notification)
        }
        return payloads
    }
}
