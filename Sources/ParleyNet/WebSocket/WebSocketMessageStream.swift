import ParleySync

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
        @usableFromInline let queue: InboundMessageQueue

        init(queue: InboundMessageQueue) {
            self.queue = queue
        }

        /// The next message, or `nil` at the end.
        public mutating func next() async -> WebSocketMessage? {
            await next(isolation: nil)
        }

        /// The next message, or `nil` at the end (isolation-aware form: an actor iterating
        /// stays on its executor, so each message costs no executor hop).
        ///
        /// Inlinable so that, in the caller's loop, the only executor check left per message is
        /// the one after the wait; as a call it adds one on entry and one in the caller on return.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async -> WebSocketMessage? {
            switch queue.firstLook() {
            case .message(let message):
                return message
            case .waitAsOwner:
                let queue = queue
                return await withUnsafeContinuation(isolation: actor) { queue.wait($0, cancellable: false) }
            case .waitCancellably:
                return await queue.waitCancellably(isolation: actor)
            }
        }
    }
}

/// A single-consumer queue of received messages with byte-based flow control.
///
/// `@unchecked Sendable`: `state` is guarded by its lock.
@usableFromInline
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

    /// What `next` does after its first look at the queue.
    @usableFromInline
    enum NextStep {
        /// A message was waiting: here it is.
        case message(WebSocketMessage)
        /// The connection's handler waits, with no cancellation handler (see `runAsOwner`).
        case waitAsOwner
        /// Any other consumer waits with a cancellation handler (`waitCancellably`).
        case waitCancellably
    }

    /// Takes a waiting message, or tells how the caller must wait for one; one lock either way.
    @usableFromInline
    func firstLook() -> NextStep {
        let caller = Self.currentTaskIdentity()
        let (step, onDrained) = state.withLock { state -> (NextStep, (@Sendable () -> Void)?) in
            if let (message, onDrained) = take(&state) { return (.message(message), onDrained) }
            return (caller != 0 && state.owner == caller ? .waitAsOwner : .waitCancellably, nil)
        }
        onDrained?()
        return step
    }

    /// Waits for the next message; cancelling the task ends the wait with `nil`.
    @usableFromInline
    func waitCancellably(isolation actor: isolated (any Actor)?) async -> WebSocketMessage? {
        await withTaskCancellationHandler {
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
    @usableFromInline
    func wait(_ continuation: UnsafeContinuation<WebSocketMessage?, Never>, cancellable: Bool) {
        let isCancelled = cancellable && Task.isCancelled
        let immediate = state.withLock { state -> (message: WebSocketMessage?, onDrained: (@Sendable () -> Void)?)? in
            if let (message, onDrained) = take(&state) { return (message, onDrained) }
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
        // `UnsafeCurrentTask?` is one pointer wide, `nil` being 0; reading it as bits copies
        // nothing (`map` would retain and release the task).
        withUnsafeCurrentTask { task in unsafeBitCast(task, to: UInt.self) }
    }

    /// Pops a buffered message, with what to call (outside the lock) when a paused producer may
    /// resume reading now.
    private func take(_ state: inout State) -> (WebSocketMessage, onDrained: (@Sendable () -> Void)?)? {
        guard let message = state.messages.pop() else { return nil }
        state.bufferedBytes -= message.byteCount
        guard state.paused, state.bufferedBytes < lowWater else { return (message, nil) }
        state.paused = false
        return (message, state.onDrained)
    }
}
