import CLibWebsockets
import Foundation
import ParleySync

/// One HTTP request on a server connection, from its headers to the last byte of its response.
///
/// Service-thread state (`wsi`, the request being read, the write phase) is touched only on the
/// service thread. The handler's result and streamed chunks arrive from tasks through `shared`.
///
/// `@unchecked Sendable`: `shared` is guarded by its lock; every other mutable property is
/// confined to the service thread.
final class HTTPExchange: ServiceThreadWork, @unchecked Sendable {
    /// Streamed bytes allowed to wait for the socket before the producer is suspended.
    static let streamHighWater = 256 << 10
    /// The most bytes written per writable callback, so one response cannot starve others.
    static let writeSlice = 64 << 10

    private enum Phase {
        case readingBody
        case awaitingDispatch
        case awaitingResponse
        /// Writing a frame made by `HTTPResponseHead.frame` (payload after `lwsPre` headroom).
        case sendingFrame([UInt8], offset: Int)
        case streaming(framing: BodyFraming)
        case closingAfterFlush
        case done
    }

    private struct Shared {
        var response: HTTPResponse?
        var chunks = FIFO<Data>()
        var chunkBytes = 0
        var streamEnded = false
        var wakeScheduled = false
        /// The handler is running on the service thread from inside `run`, which looks at
        /// whatever it produced as soon as it returns: no wake-up needed meanwhile.
        var handlerStarting = false
        var connectionClosed = false
        var task: Task<Void, Never>?
        var spaceWaiter: CheckedContinuation<Void, Never>?
    }

    private let loop: ServiceLoop
    private let shared = Locked(Shared())

    // Service thread only.
    private var wsi: OpaquePointer?
    private var phase = Phase.readingBody
    private(set) var request: HTTPRequest
    private let keepAlive: Bool
    private var closeAfterResponse: Bool
    private var discardsBody = false
    private let bodyLimit: Int

    /// Starts an exchange for a request whose head was just parsed.
    init(wsi: OpaquePointer, loop: ServiceLoop, request: HTTPRequest, keepAlive: Bool, bodyLimit: Int) {
        self.wsi = wsi
        self.loop = loop
        self.request = request
        self.keepAlive = keepAlive
        self.closeAfterResponse = !keepAlive
        self.bodyLimit = bodyLimit
    }

    // MARK: Reading (service thread)

    /// A body must arrive within this, extended by a second for every `bodyMinimumRate` bytes
    /// received. lws renews its own timeout on every packet, so without this a body trickled a
    /// byte at a time would hold its connection for ever (slow loris).
    static let bodyGrace: Duration = .seconds(10)
    /// The bytes per second that keep extending `bodyGrace`.
    static let bodyMinimumRate = 500

    /// Whether the body is arriving too slowly to wait for.
    var isBodyTooSlow: Bool {
        let allowed = Self.bodyGrace + .milliseconds(request.body.count * 1000 / Self.bodyMinimumRate)
        return ContinuousClock.now - bodyStarted > allowed
    }

    private let bodyStarted = ContinuousClock.now

    /// Prepares for a body of `length` bytes.
    func expectBody(length: Int) {
        request.body.reserveCapacity(min(length, bodyLimit))
    }

    /// Appends a piece of the body; returns `false` when it would exceed the limit.
    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if discardsBody { return true }
        guard request.body.count + bytes.count <= bodyLimit else { return false }
        request.body.append(contentsOf: bytes)
        return true
    }

    /// Answers without reading the rest of the body, then closes the connection (used for 408, 413
    /// and 411, where the body cannot be skipped safely).
    func respondAndClose(_ response: HTTPResponse) {
        discardsBody = true
        closeAfterResponse = true
        respond(response)
        if let wsi { lws_callback_on_writable(wsi) }
    }

    /// Forces `Connection: close` on the response (the request's body framing is unusable).
    func closeAfterResponding() {
        closeAfterResponse = true
    }

    /// Records the values of the matched route's `{name}` segments.
    func setPathParameters(_ parameters: [String: String]) {
        request.pathParameters = parameters
    }

    /// Whether the body is being thrown away because a response was already chosen.
    var isDiscardingBody: Bool { discardsBody }

    /// Service thread: stops reading the connection while nothing is ready to write.
    ///
    /// lws 4.1 does not read while a transaction is in progress, so a readable socket (a
    /// pipelined request, or the client's EOF) would make its poll loop spin. Pausing avoids
    /// that. lws also skips writable callbacks while paused, so reading resumes whenever there
    /// is something to write; a vanished client is noticed by `peerHasClosed()` at that point
    /// or by POLLHUP on write.
    func pauseReading() {
        guard let wsi, !readingPaused else { return }
        readingPaused = true
        lws_rx_flow_control(wsi, 0)
    }

    /// Service thread: reads (and gets writable callbacks) again.
    func resumeReading() {
        guard let wsi, readingPaused else { return }
        readingPaused = false
        lws_rx_flow_control(wsi, 1)
    }

    private var readingPaused = false

    /// Whether the client has closed its side: a non-blocking peek reads end-of-file.
    private func peerHasClosed(_ wsi: OpaquePointer) -> Bool {
        let descriptor = lws_get_socket_fd(wsi)
        guard descriptor >= 0 else { return true }
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0
    }

    /// Service thread: answers with `response` without running a handler; the caller writes it
    /// (`writable()`) in the same callback.
    func respond(_ response: HTTPResponse) {
        phase = .awaitingResponse
        shared.withLock { $0.response = response }
    }

    /// Service thread: lifts the content timeout lws armed when the head arrived, so slow
    /// handlers and long streams survive.
    func liftContentTimeout() {
        if let wsi { lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0) }
    }

    /// Service thread: the body is complete; route the request from the next writable callback.
    func awaitDispatch() {
        guard let wsi else { return }
        phase = .awaitingDispatch
        lws_callback_on_writable(wsi)
    }

    /// Service thread: whether routing is due now (see `awaitDispatch`); begins it when it is.
    func takeDispatch() -> Bool {
        guard case .awaitingDispatch = phase else { return false }
        liftContentTimeout()
        phase = .awaitingResponse
        return true
    }

    /// Service thread: records that lws reported the body complete; `false` when it already had.
    func markBodyComplete() -> Bool {
        defer { bodyCompleted = true }
        return !bodyCompleted
    }

    private var bodyCompleted = false

    /// Service thread: the response is fully handed to lws; the connection moves on without
    /// this exchange.
    func completed() {
        wsi = nil
        phase = .done
    }

    /// Runs `handler` as a task, then sends what it returns.
    ///
    /// The task starts immediately, on the service thread, and prefers that thread when it
    /// resumes (`ServiceLoopExecutor`): a handler that answers without suspending is answered in
    /// the callback that routed the request, with no thread hop and no wake-up of the service
    /// loop.
    func run(_ handler: @escaping HTTPHandler) {
        phase = .awaitingResponse
        let request = request
        let isHead = request.method == "HEAD"
        shared.withLock { $0.handlerStarting = true }
        let task = Task.immediate(executorPreference: loop.executor) { [self] in
            var response: HTTPResponse
            do {
                response = try await handler(request)
            } catch let error as HTTPError {
                response = error.response
            } catch {
                // Cancelled because the client went away: nobody is left to answer.
                if Task.isCancelled { return }
                response = .error(status: 500, code: "internal_error", message: "\(error)")
            }
            deliver(response)
            if case .stream(let stream) = response.body, !isHead {
                for await chunk in stream where !chunk.isEmpty {
                    await enqueue(chunk)
                }
                endStream()
            }
        }
        let closedAlready = shared.withLock { shared -> Bool in
            shared.handlerStarting = false
            shared.task = task
            return shared.connectionClosed
        }
        if closedAlready { task.cancel() }
    }

    // MARK: From tasks (any thread)

    /// Hands the response to the service thread.
    func deliver(_ response: HTTPResponse) {
        shared.withLock { $0.response = response }
        wake()
    }

    /// Queues one streamed chunk, suspending while too much is waiting for the socket.
    private func enqueue(_ chunk: Data) async {
        let mustWait = shared.withLock { shared -> Bool in
            guard !shared.connectionClosed else { return false }
            shared.chunks.push(chunk)
            shared.chunkBytes += chunk.count
            return shared.chunkBytes > Self.streamHighWater
        }
        wake()
        guard mustWait else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = shared.withLock { shared -> Bool in
                if shared.connectionClosed || shared.chunkBytes <= Self.streamHighWater { return true }
                shared.spaceWaiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func endStream() {
        shared.withLock { $0.streamEnded = true }
        wake()
    }

    private func wake() {
        let schedule = shared.withLock { shared -> Bool in
            guard !shared.wakeScheduled, !shared.connectionClosed, !shared.handlerStarting else { return false }
            shared.wakeScheduled = true
            return true
        }
        if schedule { loop.schedule(self) }
    }

    /// Service thread: asks lws for a writable callback (or drops a vanished client).
    func runOnServiceThread() -> Bool {
        shared.withLock { $0.wakeScheduled = false }
        guard let wsi else { return false }
        if readingPaused, peerHasClosed(wsi) {
            // Closing makes lws report LWS_CALLBACK_CLOSED_HTTP, which cancels the handler
            // and any stream it feeds.
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            return true
        }
        let resumed = readingPaused
        resumeReading()
        lws_callback_on_writable(wsi)
        return resumed
    }

    // MARK: Writing (service thread)

    /// What the writable callback should do next.
    enum WriteOutcome {
        /// Keep the connection; nothing more to do now.
        case wait
        /// The response is complete; the transaction can end (keep-alive).
        case completed
        /// Close the connection now.
        case close
    }

    /// Writes the next piece of the response.
    func writable() -> WriteOutcome {
        guard let wsi else { return .close }
        switch phase {
        case .readingBody, .awaitingDispatch, .done:
            return .wait
        case .closingAfterFlush:
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return .wait
            }
            return .close
        case .awaitingResponse:
            guard let response = shared.withLock({ $0.response }) else {
                pauseReading()
                return .wait
            }
            begin(response)
            return writable()
        case .sendingFrame(var frame, let offset):
            phase = .done // drops the phase's reference: the frame is written without a copy
            let total = frame.count - lwsPre
            let end = min(offset + Self.writeSlice, total)
            guard LWSWrite.write(wsi, frame: &frame, payloadRange: offset..<end, mode: LWS_WRITE_HTTP) else { return .close }
            if end < total {
                phase = .sendingFrame(frame, offset: end)
                lws_callback_on_writable(wsi)
                return .wait
            }
            return finish(wsi)
        case .streaming(let framing):
            return writeStreamed(wsi, framing: framing)
        }
    }

    private func begin(_ response: HTTPResponse) {
        let isHead = request.method == "HEAD"
        switch response.body {
        case .data(let body):
            let frame = HTTPResponseHead.frame(
                status: response.status, headers: response.headers,
                framing: .contentLength(body.count), keepAlive: !closeAfterResponse, body: isHead ? nil : body
            )
            phase = .sendingFrame(frame, offset: 0)
        case .stream:
            if isHead {
                let head = HTTPResponseHead.frame(
                    status: response.status, headers: response.headers, framing: .chunked, keepAlive: !closeAfterResponse, body: nil)
                phase = .sendingFrame(head, offset: 0)
                return
            }
            let framing: BodyFraming = keepAlive ? .chunked : .untilClose
            if framing == .untilClose { closeAfterResponse = true }
            let head = HTTPResponseHead.frame(
                status: response.status, headers: response.headers, framing: framing, keepAlive: !closeAfterResponse, body: nil)
            phase = .sendingFrame(head, offset: 0)
            pendingStreamFraming = framing
        }
    }

    /// Set when the head being sent belongs to a streamed response.
    private var pendingStreamFraming: BodyFraming?

    private func writeStreamed(_ wsi: OpaquePointer, framing: BodyFraming) -> WriteOutcome {
        let (chunks, ended, waiter) = shared.withLock { shared -> ([Data], Bool, CheckedContinuation<Void, Never>?) in
            var taken: [Data] = []
            var bytes = 0
            while bytes < Self.writeSlice, let chunk = shared.chunks.pop() {
                taken.append(chunk)
                bytes += chunk.count
            }
            shared.chunkBytes -= bytes
            var waiter: CheckedContinuation<Void, Never>?
            if shared.chunkBytes <= Self.streamHighWater {
                waiter = shared.spaceWaiter
                shared.spaceWaiter = nil
            }
            return (taken, shared.streamEnded && shared.chunks.isEmpty, waiter)
        }
        waiter?.resume()
        var parts = framing == .chunked ? chunks.map(HTTPResponseHead.chunk) : chunks
        if ended, framing == .chunked { parts.append(HTTPResponseHead.lastChunk) }
        if !parts.isEmpty {
            guard LWSWrite.write(wsi, parts: parts, mode: LWS_WRITE_HTTP) else { return .close }
        }
        if ended { return finish(wsi) }
        if shared.withLock({ !$0.chunks.isEmpty }) || lws_partial_buffered(wsi) != 0 {
            lws_callback_on_writable(wsi)
        } else {
            pauseReading()
        }
        return .wait
    }

    private func finish(_ wsi: OpaquePointer) -> WriteOutcome {
        if let framing = pendingStreamFraming {
            pendingStreamFraming = nil
            phase = .streaming(framing: framing)
            lws_callback_on_writable(wsi)
            return .wait
        }
        if closeAfterResponse {
            phase = .closingAfterFlush
            lws_callback_on_writable(wsi)
            return .wait
        }
        phase = .done
        return .completed
    }

    // MARK: Closing

    /// Service thread: the connection is gone; stop the handler and any stream it feeds.
    func connectionClosed() {
        wsi = nil
        phase = .done
        let (task, waiter) = shared.withLock { shared -> (Task<Void, Never>?, CheckedContinuation<Void, Never>?) in
            shared.connectionClosed = true
            shared.chunks.removeAll()
            shared.chunkBytes = 0
            defer { shared.spaceWaiter = nil }
            return (shared.task, shared.spaceWaiter)
        }
        task?.cancel()
        waiter?.resume()
    }
}
