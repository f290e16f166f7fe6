import Foundation
import ParleyCore

/// A client of Parley's OpenAI-Realtime-compatible endpoint: typed events in and out, a fresh
/// token from the app whenever one is needed, and reconnection with backoff until stopped.
///
/// Every connection is a new realtime session; `updates` says when one opens
/// (`.connected`) and ends (`.disconnected`), with the server's events in between.
///
/// ```swift
/// let client = RealtimeClient(
///     configuration: .init(server: URL(string: "http://127.0.0.1:8080")!),
///     token: LocalTokenSource(server: URL(string: "http://127.0.0.1:8080")!).fetch)
/// client.start()
/// for await update in client.updates {
///     if case .connected = update { client.send(.responseCreate()) }
/// }
/// ```
public final class RealtimeClient: @unchecked Sendable {
    // @unchecked Sendable: `state` is guarded by `lock`; every other property is immutable.

    /// Where and how the client connects.
    public let configuration: Configuration
    /// Everything that happens, in order; ends after `stop()` or when the client gives up.
    /// Iterate it from one task.
    public let updates: AsyncStream<RealtimeClientUpdate>

    private let continuation: AsyncStream<RealtimeClientUpdate>.Continuation
    private let tokenProvider: TokenProvider
    private let random: @Sendable () -> Double
    private let lock = NSLock()
    private var state = State()

    private struct State {
        var loop: Task<Void, Never>?
        var pause: Task<Void, Never>?
        /// The socket of the current attempt, from the handshake on (so `stop()` can close it).
        var socket: (any RealtimeSocket)?
        /// Whether the current socket carries an open session (events may be sent).
        var isOpen = false
        var token: RealtimeToken?
        var sentEventCount = 0
        var stopped = false
    }

    /// How a connection attempt ended.
    private enum AttemptEnding {
        /// Wait, then try again; `sessionOpened` resets the backoff.
        case retry(RealtimeConnectionProblem, sessionOpened: Bool)
        /// A cached token was refused: try again at once with a fresh one.
        case retryWithFreshToken
        /// Stop trying.
        case giveUp(RealtimeConnectionProblem)
    }

    /// Creates a client; nothing happens until `start()`.
    /// - Parameters:
    ///   - configuration: the endpoint and the reconnection policy.
    ///   - token: fetches a fresh client token (see `TokenProvider`).
    public convenience init(configuration: Configuration, token: @escaping TokenProvider) {
        self.init(configuration: configuration, token: token, random: { Double.random(in: 0...1) })
    }

    init(configuration: Configuration, token: @escaping TokenProvider, random: @escaping @Sendable () -> Double) {
        self.configuration = configuration
        self.tokenProvider = token
        self.random = random
        // Unbounded on purpose: a session's events come at the pace of real-time speech
        // (about 25 a second), far below what any consumer handles, and dropping one would
        // lose words of the conversation.
        (updates, continuation) = AsyncStream.makeStream(of: RealtimeClientUpdate.self, bufferingPolicy: .unbounded)
    }

    /// Starts connecting, and reconnecting whenever the session is lost, until `stop()`.
    public func start() {
        lock.withLock {
            guard state.loop == nil, !state.stopped else { return }
            state.loop = Task { await self.run() }
        }
    }

    /// Closes the session and stops reconnecting; `updates` ends. The client cannot be
    /// started again.
    public func stop() {
        let (loop, pause, socket) = lock.withLock { () -> (Task<Void, Never>?, Task<Void, Never>?, (any RealtimeSocket)?) in
            state.stopped = true
            state.isOpen = false
            defer { state.loop = nil; state.pause = nil; state.socket = nil }
            return (state.loop, state.pause, state.socket)
        }
        loop?.cancel()
        pause?.cancel()
        socket?.close()
        continuation.finish()
    }

    /// Skips the rest of the wait before the next reconnection attempt (for example when the
    /// app comes to the foreground or the network returns).
    public func reconnectNow() {
        lock.withLock { state.pause }?.cancel()
    }

    /// Whether a session is open, so that `send` delivers.
    public var isConnected: Bool { lock.withLock { state.isOpen } }

    /// Sends a client event on the open session, giving it an `event_id` if it has none.
    /// - Returns: the event's `event_id` (errors caused by it carry the same id), or `nil` when
    ///   no session is open and the event was dropped.
    @discardableResult
    public func send(_ event: RealtimeClientEvent) -> String? {
        lock.withLock {
            guard state.isOpen, let socket = state.socket else { return nil }
            state.sentEventCount += 1
            let eventID = event.eventID ?? "evt_client_\(state.sentEventCount)"
            do {
                try socket.send(event.withEventID(eventID).encode(dialect: configuration.dialect))
            } catch {
                return nil
            }
            return eventID
        }
    }

    // MARK: - Connection loop

    private func run() async {
        var backoff = configuration.backoff
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            continuation.yield(.connecting(attempt: attempt))
            let ending = await attemptSession()
            guard !Task.isCancelled else { break }
            switch ending {
            case .giveUp(let problem):
                continuation.yield(.disconnected(problem, retryIn: nil))
                continuation.finish()
                return
            case .retryWithFreshToken:
                continue
            case .retry(let problem, let sessionOpened):
                if sessionOpened {
                    backoff.reset()
                    attempt = 0
                }
                let delay = backoff.nextDelay(random: random())
                continuation.yield(.disconnected(problem, retryIn: delay))
                await pause(for: delay)
            }
        }
    }

    /// One connection: token, handshake, `session.created`, then events until it closes.
    private func attemptSession() async -> AttemptEnding {
        let token: RealtimeToken
        let tokenWasCached: Bool
        do {
            (token, tokenWasCached) = try await currentToken()
        } catch let error as ProviderError where !error.isRetryable {
            return .giveUp(.tokenUnavailable(error.message))
        } catch {
            return .retry(.tokenUnavailable(String(describing: error)), sessionOpened: false)
        }

        var headers = [("Authorization", "Bearer \(token.value)")]
        if configuration.dialect == .beta { headers.append(("OpenAI-Beta", "realtime=v1")) }
        let socket: any RealtimeSocket
        do {
            socket = try await RealtimeSocketFactory.connect(
                url: configuration.url, headers: headers, maxMessageSize: configuration.maxMessageSize
            )
        } catch {
            return ending(for: error, tokenWasCached: tokenWasCached)
        }
        guard adopt(socket) else {
            socket.close()
            return .retry(.connectionLost(closeCode: nil), sessionOpened: false)
        }
        defer { release(socket) }

        let first: FirstMessage
        do {
            first = try await firstMessage(from: socket)
        } catch {
            return ending(for: error, tokenWasCached: tokenWasCached)
        }
        switch first {
        case .timedOut:
            return .retry(.sessionNotStarted("no session.created within \(configuration.sessionStartTimeout)"), sessionOpened: false)
        case .closed:
            return .retry(.sessionNotStarted("the connection closed before the session started"), sessionOpened: false)
        case .message(.binary):
            return .retry(.sessionNotStarted("the server sent a binary message"), sessionOpened: false)
        case .message(.text(let text)):
            switch try? RealtimeServerEvent.decode(text) {
            case .sessionCreated(let info)?:
                lock.withLock { state.isOpen = state.socket != nil }
                continuation.yield(.connected(info))
            case .error(let error)?:
                return .retry(.sessionNotStarted(error.message), sessionOpened: false)
            default:
                return .retry(.sessionNotStarted("the first event was not session.created"), sessionOpened: false)
            }
        }

        do {
            while let message = try await socket.receive() {
                switch message {
                case .text(let text): deliver(text)
                case .binary: continuation.yield(.unreadable("a binary message, which the protocol does not use"))
                }
            }
        } catch {
            // The connection broke; reported as lost below.
        }
        return .retry(.connectionLost(closeCode: socket.closeCode), sessionOpened: true)
    }

    private func deliver(_ text: String) {
        do throws(RealtimeProtocolError) {
            let event = try RealtimeServerEvent.decode(text)
            continuation.yield(.event(event, eventID: EventIDScanner.eventID(in: text)))
        } catch where error.code == "unknown_event" {
            // Events this client does not know (newer protocol versions) are skipped.
        } catch {
            continuation.yield(.unreadable(error.message))
        }
    }

    private func ending(for error: any Error, tokenWasCached: Bool) -> AttemptEnding {
        switch error {
        case RealtimeSocketError.rejected(let status, let reason) where status == 401 || status == 403:
            lock.withLock { state.token = nil }
            return tokenWasCached ? .retryWithFreshToken : .retry(.unauthorized(reason), sessionOpened: false)
        case RealtimeSocketError.rejected(let status, let reason):
            return .retry(.unreachable("HTTP \(status): \(reason)"), sessionOpened: false)
        case RealtimeSocketError.failed(let reason):
            return .retry(.unreachable(reason), sessionOpened: false)
        default:
            return .retry(.unreachable(String(describing: error)), sessionOpened: false)
        }
    }

    /// The cached token while it is usable, otherwise a fresh one from the provider.
    private func currentToken() async throws -> (RealtimeToken, cached: Bool) {
        let margin = configuration.tokenRefreshMargin
        if let cached = lock.withLock({ state.token }), cached.isUsable(margin: margin) {
            return (cached, true)
        }
        let fresh = try await tokenProvider()
        lock.withLock { state.token = fresh }
        return (fresh, false)
    }

    /// Makes `socket` the current one; `false` when the client was stopped meanwhile.
    private func adopt(_ socket: any RealtimeSocket) -> Bool {
        lock.withLock {
            guard !state.stopped else { return false }
            state.socket = socket
            return true
        }
    }

    private func release(_ socket: any RealtimeSocket) {
        socket.close()
        lock.withLock {
            state.isOpen = false
            state.socket = nil
        }
    }

    private enum FirstMessage {
        case message(RealtimeSocketMessage)
        case closed
        case timedOut
    }

    /// The first message, within the session start timeout (the socket is closed on timeout).
    private func firstMessage(from socket: any RealtimeSocket) async throws -> FirstMessage {
        let timeout = configuration.sessionStartTimeout
        return try await withThrowingTaskGroup(of: FirstMessage.self) { group in
            group.addTask { try await socket.receive().map(FirstMessage.message) ?? .closed }
            group.addTask {
                try await Task.sleep(for: timeout)
                socket.close()
                return .timedOut
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { return .closed }
            return first
        }
    }

    /// Waits `delay`, or less when `reconnectNow()` or `stop()` cuts the wait short.
    private func pause(for delay: Duration) async {
        let pause = Task<Void, Never> { try? await Task.sleep(for: delay) }
        let stopped = lock.withLock { () -> Bool in
            state.pause = pause
            return state.stopped
        }
        if stopped { pause.cancel() }
        await withTaskCancellationHandler {
            await pause.value
        } onCancel: {
            pause.cancel()
        }
        lock.withLock { state.pause = nil }
    }
}
