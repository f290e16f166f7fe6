/// The messages a WebSocket receives, in order; ends when the connection closes.
///
/// Iterate it from one task (`for await message in connection.messages`). When the consumer
/// falls behind, the connection stops reading from the socket until it catches up, so a fast
/// sender cannot grow memory without bound.
public struct WebSocketMessageStream: AsyncSequence, Sendable {
    /// The element type: one complete message.
    public typealias Element = WebSocketMessage
    /// Iterating never throws.
    public typealias Failure = Never

    let queue: InboundMessageQueue

    /// Creates the iterator; there should be only one consumer at a time.
    public func makeAsyncIterator() -> Iterator {
        Iterator(queue: queue)
    }

    /// Yields the next message, or `nil` once the connection closed (or the task is cancelled).
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let queue: InboundMessageQueue

        /// The next message, or `nil` at the end.
        public mutating func next() async -> WebSocketMessage? {
            await queue.next()
        }

        /// The next message, or `nil` at the end (isolation-aware form: an actor iterating
        /// stays on its executor, so each message costs no executor hop).
        public mutating func next(isolation actor: isolated (any Actor)?) async -> WebSocketMessage? {
            await queue.next(isolation: actor)
        }
    }
}

/// A single-consumer queue of received messages with byte-based flow control.
///
/// `@unchecked Sendable`: `state` is guarded by its lock.
final class InboundMessageQueue: @unchecked Sendable {
    /// Above this many buffered bytes the connection pauses reading.
    let highWater: Int
    /// Below this many buffered bytes a paused connection resumes reading.
    let lowWater: Int
    private struct State {
        var messages = FIFO<WebSocketMessage>()
        var bufferedBytes = 0
        var finished = false
        var paused = false
        var waiter: UnsafeContinuation<WebSocketMessage?, Never>?
        /// Called (on the consumer's thread) when buffered bytes drop below `lowWater` after a pause.
        var onDrained: (@Sendable () -> Void)?
        /// The identity of the connection's handler task while it runs (see `runAsOwner`),
        /// 0 otherwise; cleared before that task ends.
        var owner: UInt = 0
    }

    private let state = Locked(State())

    init(highWater: Int = 4 << 20, lowWater: Int = 1 << 20) {
        self.highWater = highWater
        self.lowWater = lowWater
    }

    /// Sets what runs when a paused producer may resume reading.
    func setOnDrained(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.onDrained = action }
    }

    /// Adds a message; returns `true` when the producer should pause reading.
    func push(_ message: WebSocketMessage) -> Bool {
        let (waiter, pause) = state.withLock { state -> (UnsafeContinuation<WebSocketMessage?, Never>?, Bool) in
            guard !state.finished else { return (nil, false) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false)
            }
            state.messages.push(message)
            state.bufferedBytes += message.byteCount
            if state.bufferedBytes > highWater, !state.paused {
                state.paused = true
                return (nil, true)
            }
            return (nil, false)
        }
        waiter?.resume(returning: message)
        return pause
    }

    /// Ends the sequence after the buffered messages; the producer is not called any more.
    func finish() {
        let waiter = state.withLock { state -> UnsafeContinuation<WebSocketMessage?, Never>? in
            state.finished = true
            state.onDrained = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Runs `body`, the connection's handler, as the queue's owner.
    ///
    /// The owner is cancelled only once the queue has finished (the connection closed), which
    /// already ends its wait, so it waits for messages without a cancellation handler: that
    /// saves adding and removing a task status record and three executor hops per message.
    /// Every other consumer, child tasks of the handler included, still gets one.
    func runAsOwner(_ body: () async -> Void) async {
        let task = Self.currentTaskIdentity()
        state.withLock { $0.owner = task }
        await body()
        state.withLock { $0.owner = 0 }
    }

    /// The next message, suspending until one arrives; `nil` at the end or on cancellation.
    /// Runs on (and resumes onto) the caller's actor.
    @inline(__always)
    func next(isolation actor: isolated (any Actor)? = #isolation) async -> WebSocketMessage? {
        let caller = Self.currentTaskIdentity()
        // One lock either takes a waiting message or tells whether the caller is the owner.
        let ready = state.withLock { state -> (message: WebSocketMessage?, onDrained: (@Sendable () -> Void)?, callerIsOwner: Bool) in
            if let (message, drained) = take(&state) { return (message, drained ? state.onDrained : nil, false) }
            return (nil, nil, caller != 0 && state.owner == caller)
        }
        if let message = ready.message {
            ready.onDrained?()
            return message
        }
        if ready.callerIsOwner {
            return await withUnsafeContinuation(isolation: actor) { wait($0, cancellable: false) }
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { wait($0, cancellable: true) }
        } onCancel: {
            let waiter = state.withLock { state -> UnsafeContinuation<WebSocketMessage?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Resumes `continuation` with a message that arrived meanwhile (or `nil` at the end, on
    /// cancellation when `cancellable`, or when another consumer is already waiting), or parks
    /// it for `push`.
    private func wait(_ continuation: UnsafeContinuation<WebSocketMessage?, Never>, cancellable: Bool) {
        let isCancelled = cancellable && Task.isCancelled
        let immediate = state.withLock { state -> (message: WebSocketMessage?, onDrained: (@Sendable () -> Void)?)? in
            if let (message, drained) = take(&state) { return (message, drained ? state.onDrained : nil) }
            if state.finished || isCancelled || state.waiter != nil { return (nil, nil) }
            state.waiter = continuation
            return nil
        }
        if let immediate {
            immediate.onDrained?()
            continuation.resume(returning: immediate.message)
        }
    }

    /// The running task's address, or 0 outside a task: an identity to compare, never used to
    /// reach the task (and cheaper than keeping an `UnsafeCurrentTask`, whose copies retain it).
    private static func currentTaskIdentity() -> UInt {
        withUnsafeCurrentTask { task in task.map { unsafeBitCast($0, to: UInt.self) } ?? 0 }
    }

    /// Pops a buffered message; `drained` tells whether a paused producer may resume.
    private func take(_ state: inout State) -> (WebSocketMessage, drained: Bool)? {
        guard let message = state.messages.pop() else { return nil }
        state.bufferedBytes -= message.byteCount
        var drained = false
        if state.paused, state.bufferedBytes < lowWater {
            state.paused = false
            drained = true
        }
        return (message, drained)
    }
}
