import CLibWebsockets
import Foundation
import ParleySync

/// An open WebSocket, server or client side: receive with `messages`, send from any task.
///
/// ```swift
/// for await message in connection.messages {
///     try connection.send(message)   // echo
/// }
/// ```
///
/// `@unchecked Sendable`: `shared` is guarded by its lock; `wsi`, the message being assembled
/// and the message being written are touched only on the service thread.
public final class WebSocketConnection: ServiceThreadWork, @unchecked Sendable {
    /// The received messages; the sequence ends when the connection closes.
    public let messages: WebSocketMessageStream

    /// The subprotocol both sides agreed on, if any.
    public var subprotocol: String? { shared.withLock { $0.subprotocol } }

    /// The close code once the connection is closing or closed: the one sent when this side
    /// closed, the peer's when it closed first, 1006 when the socket dropped without one.
    public var closeCode: UInt16? { shared.withLock { $0.closeCode } }

    /// Whether the connection can still send.
    public var isOpen: Bool { shared.withLock { $0.state == .open } }

    /// Largest piece written per writable callback; bigger messages go out as fragments.
    static let writeSlice = ServiceLoop.writeBufferCapacity

    private enum State { case open, closing, closed }

    /// A message waiting to be written. It keeps the sender's payload (no copy): the service
    /// thread copies each piece into the loop's write buffer when the socket is writable.
    private struct Outgoing {
        var message: WebSocketMessage
        /// The payload size in bytes.
        var byteCount: Int
    }

    private struct Shared {
        var state = State.open
        var subprotocol: String?
        var closeCode: UInt16?
        var outgoing = FIFO<Outgoing>()
        var queuedBytes = 0
        var closeRequest: (code: UInt16, reason: String)?
        var mustAbort = false
        var resumeReading = false
        var wakeScheduled = false
        var handlerTask: Task<Void, Never>?
        var closedWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let loop: ServiceLoop
    private let maxMessageSize: Int
    private let maxOutgoingQueueBytes: Int
    private let inbound: InboundMessageQueue
    private let shared: Locked<Shared>

    // Service thread only.
    private var wsi: OpaquePointer?
    private var assembly = Data()
    private var assemblyIsBinary = false
    private var assembling = false
    private var writing: (message: Outgoing, offset: Int)?
    private var readingPaused = false
    /// Runs on the service thread once the connection is closed.
    var onClosed: (() -> Void)?

    init(wsi: OpaquePointer?, loop: ServiceLoop, subprotocol: String?, maxMessageSize: Int, maxOutgoingQueueBytes: Int) {
        self.wsi = wsi
        self.loop = loop
        self.maxMessageSize = maxMessageSize
        self.maxOutgoingQueueBytes = maxOutgoingQueueBytes
        let inbound = InboundMessageQueue()
        self.inbound = inbound
        self.messages = WebSocketMessageStream(queue: inbound)
        var initial = Shared()
        initial.subprotocol = subprotocol
        self.shared = Locked(initial)
        // A strong reference on purpose (a weak one would move every retain and release of the
        // connection to the slow side-table path); `closed()` finishes the queue, which drops it.
        inbound.setOnDrained { [self] in resumeReading() }
    }

    // MARK: Public API

    /// Queues `message` for sending; never blocks.
    /// - Throws: `WebSocketError.closed` after close; `WebSocketError.backpressure` when the
    ///   peer stopped reading and the queue is full — the connection is then closed with 1008.
    public func send(_ message: WebSocketMessage) throws {
        // On the service thread (a handler resumed by a received message), write at once or
        // ask lws for a writable callback right away instead of scheduling a wake-up.
        let direct = loop.isCurrent && (loop.connectionInCallback ?? wsi) == wsi ? wsi : nil
        if let direct, try writeAtOnce(message, to: direct) { return }
        let outgoing: Outgoing
        switch message {
        case .text(var text):
            text.makeContiguousUTF8()
            outgoing = Outgoing(message: .text(text), byteCount: text.utf8.count)
        case .binary(let data):
            outgoing = Outgoing(message: message, byteCount: data.count)
        }
        let limit = maxOutgoingQueueBytes
        let (schedule, overflowed) = try shared.withLock { shared -> (Bool, Bool) in
            guard shared.state == .open else { throw WebSocketError.closed }
            if shared.queuedBytes > 0, shared.queuedBytes + outgoing.byteCount > limit {
                shared.state = .closing
                shared.closeCode = WebSocketCloseCode.policyViolation
                shared.mustAbort = true
                shared.outgoing.removeAll()
                shared.queuedBytes = 0
                return (claimWake(&shared), true)
            }
            shared.outgoing.push(outgoing)
            shared.queuedBytes += outgoing.byteCount
            return (direct == nil && claimWake(&shared), false)
        }
        if schedule { loop.schedule(self) }
        if overflowed { throw WebSocketError.backpressure }
        if let direct { lws_callback_on_writable(direct) }
    }

    /// Service thread: writes `message` now when nothing is ahead of it (no queued message, no
    /// half-written one, nothing lws still holds) and it fits in one frame; returns whether it
    /// did. lws keeps whatever the socket does not take and sends it before any later frame, so
    /// the writable round trip (a loop pass, and with epoll two `epoll_ctl` calls) is saved.
    /// - Throws: `WebSocketError.closed` after close.
    private func writeAtOnce(_ message: WebSocketMessage, to wsi: OpaquePointer) throws -> Bool {
        guard writing == nil, lws_partial_buffered(wsi) == 0 else { return false }
        let byteCount = message.byteCount
        guard byteCount <= Self.writeSlice else { return false }
        let nothingAhead = try shared.withLock { shared -> Bool in
            guard shared.state == .open else { throw WebSocketError.closed }
            return shared.outgoing.isEmpty
        }
        guard nothingAhead else { return false }
        let mode = message.writeMode(isFirst: true, isFinal: true)
        let written = message.withPayload(0..<byteCount) { LWSWrite.write(wsi, $0, through: loop, mode: mode) }
        if !written {
            // The socket failed: lws closes the connection once this pass is over.
            loop.afterService { lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
        }
        return true
    }

    /// Starts the closing handshake with `code` after the queued messages are sent.
    /// Does nothing when the connection is already closing.
    public func close(code: UInt16 = WebSocketCloseCode.normal, reason: String = "") {
        let schedule = shared.withLock { shared -> Bool in
            guard shared.state == .open else { return false }
            shared.state = .closing
            shared.closeCode = code
            shared.closeRequest = (code, String(decoding: reason.utf8.prefix(120), as: UTF8.self))
            return claimWake(&shared)
        }
        if schedule { loop.schedule(self) }
    }

    /// Returns once the connection is fully closed.
    public func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let closed = shared.withLock { shared -> Bool in
                if shared.state != .closed { shared.closedWaiters.append(continuation) }
                return shared.state == .closed
            }
            if closed { continuation.resume() }
        }
    }

    // MARK: Wiring (service thread unless noted)

    /// Remembers the task running the connection's handler, cancelled when the socket closes.
    func setHandlerTask(_ task: Task<Void, Never>) {
        let closed = shared.withLock { shared -> Bool in
            shared.handlerTask = task
            return shared.state == .closed
        }
        if closed { task.cancel() }
    }

    /// Runs the connection's handler (in the task given to `setHandlerTask`).
    func runHandler(_ handler: () async -> Void) async {
        await inbound.runAsOwner(handler)
    }

    /// Records the subprotocol the server chose (client side, before the connection is shared).
    func setSubprotocol(_ subprotocol: String?) {
        shared.withLock { $0.subprotocol = subprotocol }
    }

    /// Binds the connection to its lws connection once it exists (client side).
    func attach(_ wsi: OpaquePointer) {
        self.wsi = wsi
    }

    private func claimWake(_ shared: inout Shared) -> Bool {
        guard !shared.wakeScheduled else { return false }
        shared.wakeScheduled = true
        return true
    }

    /// Called from the consumer when the inbound buffer drained after a pause (any thread).
    private func resumeReading() {
        let schedule = shared.withLock { shared -> Bool in
            shared.resumeReading = true
            return claimWake(&shared)
        }
        if schedule { loop.schedule(self) }
    }

    /// Service thread: drops a connection whose peer stopped reading, resumes reading, and asks
    /// for a writable callback (the usual case: a message was queued from another thread).
    func runOnServiceThread() -> Bool {
        let (abort, resume, code) = shared.withLock { shared -> (Bool, Bool, UInt16?) in
            shared.wakeScheduled = false
            defer { shared.resumeReading = false }
            return (shared.mustAbort, shared.resumeReading, shared.closeCode)
        }
        guard let wsi else { return false }
        if abort {
            // The peer is not reading, so a close frame may never get out: drop the socket.
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code ?? WebSocketCloseCode.policyViolation)), nil, 0)
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            return true
        }
        let resumes = resume && readingPaused
        if resumes {
            readingPaused = false
            lws_rx_flow_control(wsi, 1)
        }
        lws_callback_on_writable(wsi)
        return resumes
    }

    /// Handles received payload; returns non-zero to close the connection.
    func receive(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        let isFinal = lws_is_final_fragment(wsi) != 0
        if !assembling, isFinal {
            // The whole message arrived in one piece (the usual case): no assembly buffer.
            guard bytes.count <= maxMessageSize else { return refuseTooBig(wsi) }
            let message: WebSocketMessage = lws_frame_is_binary(wsi) != 0
                ? .binary(Data(bytes))
                : .text(String(decoding: bytes, as: UTF8.self))
            deliver(wsi, message)
            return 0
        }
        if !assembling {
            assembling = true
            assemblyIsBinary = lws_frame_is_binary(wsi) != 0
            assembly = Data()
            // The rest of this frame is announced: grow once instead of doubling.
            let announced = bytes.count + Int(lws_remaining_packet_payload(wsi))
            assembly.reserveCapacity(min(announced, maxMessageSize))
        }
        guard assembly.count + bytes.count <= maxMessageSize else { return refuseTooBig(wsi) }
        assembly.append(contentsOf: bytes)
        guard isFinal else { return 0 }
        assembling = false
        let message: WebSocketMessage = assemblyIsBinary
            ? .binary(assembly)
            : .text(String(decoding: assembly, as: UTF8.self))
        assembly = Data()
        deliver(wsi, message)
        return 0
    }

    /// Hands a complete message to the consumer, pausing reading when it falls behind.
    private func deliver(_ wsi: OpaquePointer, _ message: WebSocketMessage) {
        if inbound.push(message), !readingPaused {
            readingPaused = true
            lws_rx_flow_control(wsi, 0)
        }
        loop.runJobs(inCallbackOf: wsi)
    }

    /// Closes with 1009 because a message exceeds `maxMessageSize`; returns lws' "close now".
    private func refuseTooBig(_ wsi: OpaquePointer) -> Int32 {
        shared.withLock { shared in
            shared.state = .closing
            shared.closeCode = shared.closeCode ?? WebSocketCloseCode.messageTooBig
        }
        assembling = false
        assembly = Data()
        let reason = Array("message too big".utf8)
        reason.withUnsafeBufferPointer { buffer in
            lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, UnsafeMutablePointer(mutating: buffer.baseAddress), buffer.count)
        }
        return -1
    }

    /// Writes the next fragment; returns non-zero to close the connection.
    func writable(_ wsi: OpaquePointer) -> Int32 {
        // One lock per callback. A message leaves the queue's byte count when it is taken, so
        // the bound applies to what waits behind the message being written. A message queued
        // after this look schedules its own writable callback.
        let (next, more, closeRequest) = shared.withLock { shared -> (Outgoing?, Bool, (code: UInt16, reason: String)?) in
            var next: Outgoing?
            if writing == nil, let popped = shared.outgoing.pop() {
                shared.queuedBytes -= popped.byteCount
                next = popped
            }
            return (next, !shared.outgoing.isEmpty, shared.closeRequest)
        }
        if let next { writing = (next, 0) }
        if case (let outgoing, let offset)? = writing.take() {
            let total = outgoing.byteCount
            let end = min(offset + Self.writeSlice, total)
            let mode = outgoing.message.writeMode(isFirst: offset == 0, isFinal: end == total)
            let written = outgoing.message.withPayload(offset..<end) { LWSWrite.write(wsi, $0, through: loop, mode: mode) }
            guard written else { return -1 }
            if end < total { writing = (outgoing, end) }
        }
        if writing != nil || more {
            lws_callback_on_writable(wsi)
            return 0
        }
        if let closeRequest {
            // lws waits for the peer's close answer, which queues behind whatever the peer sent
            // before it; reading paused for a slow consumer would never reach it, and closing
            // with that input unread resets the connection, which can discard our close frame
            // (and the error event before it) at the peer. lws drops data frames while it waits.
            if readingPaused {
                readingPaused = false
                lws_rx_flow_control(wsi, 1)
            }
            var reason = Array(closeRequest.reason.utf8)
            reason.withUnsafeMutableBufferPointer { buffer in
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(closeRequest.code)), buffer.baseAddress, buffer.count)
            }
            return -1
        }
        return 0
    }

    /// The peer sent a close frame first; `payload` holds its code and reason.
    func peerClosing(_ payload: UnsafeRawBufferPointer) {
        let code: UInt16 = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 1005
        shared.withLock { shared in
            if shared.closeCode == nil { shared.closeCode = code }
            if shared.state == .open { shared.state = .closing }
        }
    }

    /// The socket is closed: end `messages`, stop the handler and wake anyone waiting.
    func closed() {
        wsi = nil
        writing = nil
        let (task, waiters) = shared.withLock { shared -> (Task<Void, Never>?, [CheckedContinuation<Void, Never>])? in
            guard shared.state != .closed else { return nil }
            shared.state = .closed
            if shared.closeCode == nil { shared.closeCode = WebSocketCloseCode.abnormal }
            shared.outgoing.removeAll()
            shared.queuedBytes = 0
            defer { shared.closedWaiters = [] }
            return (shared.handlerTask, shared.closedWaiters)
        } ?? (nil, [])
        inbound.finish()
        task?.cancel()
        waiters.forEach { $0.resume() }
        onClosed?()
        onClosed = nil
    }
}

extension WebSocketMessage {
    /// The `lws_write` mode of a frame carrying part of this message.
    fileprivate func writeMode(isFirst: Bool, isFinal: Bool) -> lws_write_protocol {
        let isBinary = if case .binary = self { true } else { false }
        let flags = lws_write_ws_flags(
            Int32(isBinary ? LWS_WRITE_BINARY.rawValue : LWS_WRITE_TEXT.rawValue), isFirst ? 1 : 0, isFinal ? 1 : 0)
        return lws_write_protocol(rawValue: UInt32(flags))
    }

    /// Runs `body` with the payload bytes `range`.
    fileprivate func withPayload<Result>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        switch self {
        case .binary(let data):
            return data.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
        case .text(let text):
            // Native strings are contiguous; `send` makes a queued one so, and only a bridged
            // string written at once can take the copying path.
            return text.utf8.withContiguousStorageIfAvailable { body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: $0[range]))) }
                ?? Array(text.utf8)[range].withUnsafeBytes(body)
        }
    }
}
