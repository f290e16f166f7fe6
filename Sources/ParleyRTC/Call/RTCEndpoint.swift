import COpenSSL
import Foundation

/// The WebRTC side of the server: one UDP socket and one event-loop thread for every call
/// (ICE-lite host candidate, RFC 7983 demultiplexing of STUN, DTLS and SRTP by first byte).
///
/// ```swift
/// let endpoint = try RTCEndpoint(settings: .init(host: "127.0.0.1"))
/// let call = try endpoint.open(offer: try SessionOffer(parsing: sdp))
/// // send call.answer back; then read call.events
/// ```
///
/// `@unchecked Sendable`: `calls`, `callsByAddress` and the calls' transport state are used
/// only on the loop thread; `commands` is guarded by `lock`; the rest is immutable.
public final class RTCEndpoint: @unchecked Sendable {
    /// Where the endpoint listens and how long calls may stay quiet.
    public struct Settings: Sendable {
        /// The address to bind and to announce as the host candidate.
        public var host: String
        /// The UDP port (0 picks one).
        public var port: Int
        /// A call whose ICE and DTLS are not done after this ends.
        public var setupTimeout: Duration
        /// A connected call that receives nothing for this long ends (the peer vanished).
        public var silenceTimeout: Duration
        /// The IPv4 address announced as the host candidate when peers reach the server at
        /// another address than `host` (behind NAT, or `host` 0.0.0.0); `nil` announces `host`.
        public var publicAddress: String?

        /// Creates settings.
        public init(
            host: String = "127.0.0.1", port: Int = 0, setupTimeout: Duration = .seconds(15), silenceTimeout: Duration = .seconds(20),
            publicAddress: String? = nil
        ) {
            self.host = host
            self.publicAddress = publicAddress
            self.port = port
            self.setupTimeout = setupTimeout
            self.silenceTimeout = silenceTimeout
        }
    }

    /// The endpoint's settings.
    public let settings: Settings
    /// The UDP port calls reach the server on.
    public let port: Int
    /// The server's DTLS certificate.
    public let certificate: DTLSCertificate
    let advertisedHost: String
    private let socket: Int32
    /// A pipe: the loop polls its read end, `wake()` writes to the other.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let lock = NSLock()
    private var commands: [() -> Void] = []
    private var isStopping = false
    private var thread: Thread?
    private let stopped = DispatchSemaphore(value: 0)
    // Loop thread only (and `open`, under `lock`, before the loop sees the call).
    private var calls: [String: RTCCall] = [:]
    private var callsByAddress: [UInt64: RTCCall] = [:]
    private var liveCallCount = 0

    /// Binds the UDP socket and starts the event loop.
    /// - Throws: `RTCError` when the socket or the certificate cannot be made.
    public init(settings: Settings) throws(RTCError) {
        self.settings = settings
        certificate = try DTLSCertificate()
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw .socket("socket() failed (errno \(errno))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(settings.port).bigEndian
        guard inet_pton(AF_INET, settings.host, &address.sin_addr) == 1 else {
            Glibc.close(fd)
            throw .socket("'\(settings.host)' is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(fd)
            throw .socket("cannot bind \(settings.host):\(settings.port) (errno \(errno))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            _ = $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var bufferSize: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            Glibc.close(fd)
            throw .socket("pipe() failed (errno \(errno))")
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        wakeFD = pipeEnds[0]
        wakeWriteFD = pipeEnds[1]
        advertisedHost = settings.publicAddress ?? (settings.host == "0.0.0.0" ? "127.0.0.1" : settings.host)
        let thread = Thread { [self] in
            Thread.current.name = "parley-rtc"  // From inside: on Linux Foundation names only the running thread in the OS.
            run()
        }
        self.thread = thread
        thread.start()
    }

    /// The calls not yet ended.
    public var callCount: Int { lock.withLock { liveCallCount } }

    /// Starts a call answering `offer`; the caller sends `call.answer` back to the peer.
    public func open(offer: SessionOffer) throws(RTCError) -> RTCCall {
        let call = try RTCCall(offer: offer, endpoint: self, ssrc: UInt32.random(in: 1...UInt32.max))
        lock.withLock { liveCallCount += 1 }
        perform { [self] in calls[call.localUsernameFragment] = call }
        return call
    }

    /// Ends every call and stops the loop.
    public func shutdown() {
        let alreadyStopping = lock.withLock {
            defer { isStopping = true }
            return isStopping
        }
        guard !alreadyStopping else { return }
        wake()
        stopped.wait()
        Glibc.close(socket)
        Glibc.close(wakeFD)
        Glibc.close(wakeWriteFD)
    }

    // MARK: Loop plumbing

    /// Runs `command` on the loop thread.
    func perform(_ command: @escaping () -> Void) {
        lock.withLock { commands.append(command) }
        wake()
    }

    /// Wakes the loop (work is waiting).
    func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)
    }

    /// A call ended: forget it (loop thread).
    func forget(_ call: RTCCall) {
        calls[call.localUsernameFragment] = nil
        if let remote = call.remote { callsByAddress[Self.key(remote)] = nil }
        lock.withLock { liveCallCount -= 1 }
    }

    /// Sends a datagram to `address` (loop thread).
    func send(_ bytes: [UInt8], to address: sockaddr_in?) {
        guard var address else { return }
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(socket, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    private func run() {
        var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var lastTimers = ContinuousClock.now
        while true {
            // 5 ms while calls run: the outgoing audio is paced in 20 ms frames; timers need no
            // finer grain. Without calls the loop sleeps until a datagram or a command comes.
            _ = poll(&descriptors, 2, calls.isEmpty ? -1 : 5)
            if descriptors[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while read(wakeFD, &drained, drained.count) > 0 {}
            }
            let (pending, stopping) = lock.withLock {
                defer { commands.removeAll() }
                return (commands, isStopping)
            }
            for command in pending { command() }
            if stopping { break }
            receiveAll(&buffer)
            let now = ContinuousClock.now
            let elapsed = now - lastTimers
            if elapsed >= .milliseconds(10) {
                let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
                UsrsctpStack.handleTimers(elapsedMilliseconds: UInt32(milliseconds))
                lastTimers = now
            }
            for call in Array(calls.values) { call.tick(now: now) }
        }
        for call in Array(calls.values) { call.end(reason: "the server is shutting down") }
        stopped.signal()
    }

    private func receiveAll(_ buffer: inout [UInt8]) {
        while true {
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &from) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(socket, bytes.baseAddress, bytes.count, 0, $0, &length) }
                }
            }
            guard count > 0 else { return }
            buffer.withUnsafeBytes { bytes in dispatch(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), from: from) }
        }
    }

    private func dispatch(_ datagram: UnsafeRawBufferPointer, from address: sockaddr_in) {
        let first = datagram[0]
        if first < 4 {
            guard let username = STUNBindingResponder.username(of: datagram),
                  let localFragment = username.split(separator: ":").first,
                  let call = calls[String(localFragment)],
                  let request = STUNBindingResponder.request(datagram, password: call.localPassword) else { return }
            send(STUNBindingResponder.successResponse(to: request, from: address, password: call.localPassword), to: address)
            if let previous = call.remote, Self.key(previous) != Self.key(address) {
                // The peer moved (or nominated another pair): follow it.
                guard request.useCandidate else { return }
                callsByAddress[Self.key(previous)] = nil
            }
            callsByAddress[Self.key(address)] = call
            call.checked(from: address)
            return
        }
        guard let call = callsByAddress[Self.key(address)] else { return }
        if (20...63).contains(first) {
            call.receiveDTLS(datagram)
        } else if datagram.count >= 2 {
            let kind = RTPPacket.classify(first, datagram[1])
            if kind.isRTP { call.receiveMedia(datagram, isControl: kind.isRTCP) }
        }
    }

    private static func key(_ address: sockaddr_in) -> UInt64 {
        UInt64(address.sin_addr.s_addr) << 16 | UInt64(address.sin_port)
    }

    /// A random token of ICE characters (letters and digits) from OpenSSL's generator.
    static func randomToken(length: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var bytes = [UInt8](repeating: 0, count: length)
        precondition(RAND_bytes(&bytes, Int32(length)) == 1, "OpenSSL's random generator failed")
        return String(bytes.map { alphabet[Int($0) % alphabet.count] })
    }
}
