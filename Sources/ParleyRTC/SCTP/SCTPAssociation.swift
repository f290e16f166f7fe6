import CUsrsctp
import Foundation

/// One call's SCTP association over DTLS (RFC 8261) from usrsctp, run without usrsctp's own
/// threads (`usrsctp_init_nothreads`: the RTC event loop feeds packets and drives timers),
/// with the data channel establishment protocol (RFC 8832) on top.
///
/// Not thread-safe: used only on the RTC event loop's thread.
final class SCTPAssociation {
    /// What the peer sent on the association.
    enum Event {
        /// The peer opened a data channel.
        case channelOpened(stream: UInt16, label: String)
        /// A complete text message on a data channel.
        case text(stream: UInt16, String)
        /// A complete message that was not text, or was too large (dropped; named for the error).
        case refused(stream: UInt16, reason: String)
    }

    /// The largest data channel message accepted and announced (`a=max-message-size`).
    static let maximumMessageSize = 256 * 1024
    private static let dcepPPID: UInt32 = 50, textPPID: UInt32 = 51, binaryPPID: UInt32 = 53
    private static let emptyTextPPID: UInt32 = 56, emptyBinaryPPID: UInt32 = 57

    private let id: Int
    private var socket: OpaquePointer?
    /// Writes an SCTP packet into DTLS.
    private let output: ([UInt8]) -> Void
    private let onEvent: (Event) -> Void
    /// The part of a message received so far, per stream.
    private var partial: [UInt16: [UInt8]] = [:]
    private var oversized: Set<UInt16> = []

    /// Opens the association's socket and connects to `remotePort` (both sides connect).
    init(remotePort: UInt16, output: @escaping ([UInt8]) -> Void, onEvent: @escaping (Event) -> Void) throws(RTCError) {
        UsrsctpStack.start()
        self.output = output
        self.onEvent = onEvent
        id = UsrsctpStack.nextID()
        UsrsctpStack.register(self, id: id)
        let address = UnsafeMutableRawPointer(bitPattern: id)
        usrsctp_register_address(address)
        guard let socket = usrsctp_socket(AF_CONN, Int32(SOCK_STREAM.rawValue), Int32(IPPROTO_SCTP), receiveFromUsrsctp, nil, 0, address) else {
            UsrsctpStack.unregister(id: id)
            throw .crypto("usrsctp_socket")
        }
        self.socket = socket
        usrsctp_set_non_blocking(socket, 1)
        var on: Int32 = 1
        usrsctp_setsockopt(socket, Int32(IPPROTO_SCTP), SCTP_RECVRCVINFO, &on, socklen_t(MemoryLayout<Int32>.size))
        usrsctp_setsockopt(socket, Int32(IPPROTO_SCTP), SCTP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        usrsctp_setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        var local = Self.address(port: 5000, id: id)
        var remote = Self.address(port: remotePort, id: id)
        let bound = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { usrsctp_bind(socket, $0, socklen_t(MemoryLayout<sockaddr_conn>.size)) }
        }
        guard bound == 0 else { close(); throw .crypto("usrsctp_bind") }
        let connected = withUnsafeMutablePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { usrsctp_connect(socket, $0, socklen_t(MemoryLayout<sockaddr_conn>.size)) }
        }
        guard connected == 0 || errno == EINPROGRESS else { close(); throw .crypto("usrsctp_connect") }
    }

    deinit { close() }

    /// Feeds an SCTP packet that arrived in DTLS.
    func input(_ packet: [UInt8]) {
        packet.withUnsafeBytes { usrsctp_conninput(UnsafeMutableRawPointer(bitPattern: id), $0.baseAddress, $0.count, 0) }
    }

    /// Sends a text message on `stream`; `false` when the association cannot take it now.
    @discardableResult
    func send(text: String, stream: UInt16) -> Bool {
        let bytes = Array(text.utf8)
        return send(bytes.isEmpty ? [0] : bytes, stream: stream, ppid: bytes.isEmpty ? Self.emptyTextPPID : Self.textPPID)
    }

    /// Closes the socket (sending ABORT, as SO_LINGER 0 asks) and forgets the association.
    func close() {
        guard let socket else { return }
        self.socket = nil
        usrsctp_close(socket)
        usrsctp_deregister_address(UnsafeMutableRawPointer(bitPattern: id))
        UsrsctpStack.unregister(id: id)
    }

    fileprivate func emit(_ packet: UnsafeRawBufferPointer) {
        output(Array(packet))
    }

    fileprivate func received(_ data: UnsafeRawBufferPointer, stream: UInt16, ppid: UInt32, flags: Int32) {
        if flags & MSG_NOTIFICATION != 0 { return }
        if oversized.contains(stream) {
            if flags & Int32(MSG_EOR) != 0 { oversized.remove(stream) }
            return
        }
        var message = partial.removeValue(forKey: stream) ?? []
        message += data
        guard message.count <= Self.maximumMessageSize else {
            if flags & Int32(MSG_EOR) == 0 { oversized.insert(stream) }
            onEvent(.refused(stream: stream, reason: "a message larger than \(Self.maximumMessageSize) bytes"))
            return
        }
        guard flags & Int32(MSG_EOR) != 0 else {
            partial[stream] = message
            return
        }
        switch ppid {
        case Self.dcepPPID: handleControl(message, stream: stream)
        case Self.textPPID: onEvent(.text(stream: stream, String(decoding: message, as: UTF8.self)))
        case Self.emptyTextPPID: onEvent(.text(stream: stream, ""))
        default: onEvent(.refused(stream: stream, reason: "a binary message (the events are JSON text)"))
        }
    }

    /// DATA_CHANNEL_OPEN (0x03) is acknowledged with DATA_CHANNEL_ACK (0x02).
    private func handleControl(_ message: [UInt8], stream: UInt16) {
        guard message.first == 0x03, message.count >= 12 else { return }
        let labelLength = Int(message[8]) << 8 | Int(message[9])
        guard 12 + labelLength <= message.count else { return }
        let label = String(decoding: message[12..<12 + labelLength], as: UTF8.self)
        _ = send([0x02], stream: stream, ppid: Self.dcepPPID)
        onEvent(.channelOpened(stream: stream, label: label))
    }

    private func send(_ bytes: [UInt8], stream: UInt16, ppid: UInt32) -> Bool {
        guard let socket else { return false }
        var info = sctp_sndinfo()
        info.snd_sid = stream
        info.snd_ppid = ppid.bigEndian
        let sent = bytes.withUnsafeBytes { buffer in
            usrsctp_sendv(socket, buffer.baseAddress, buffer.count, nil, 0, &info, socklen_t(MemoryLayout<sctp_sndinfo>.size), UInt32(SCTP_SENDV_SNDINFO), 0)
        }
        return sent == bytes.count
    }

    private static func address(port: UInt16, id: Int) -> sockaddr_conn {
        var address = sockaddr_conn()
        address.sconn_family = UInt16(AF_CONN)
        address.sconn_port = port.bigEndian
        address.sconn_addr = UnsafeMutableRawPointer(bitPattern: id)
        return address
    }
}

/// The process's usrsctp stack: started once without threads, and the live associations by
/// the id usrsctp knows them by (a packet or timer for a closed one finds nothing).
///
/// Every use is on the RTC event loop's thread; `lock` keeps that honest for the compiler.
enum UsrsctpStack {
    private final class Registry: @unchecked Sendable {
        // Guarded by `lock`.
        let lock = NSLock()
        var associations: [Int: Weak] = [:]
        var lastID = 0
        var started = false
    }

    private struct Weak { weak var association: SCTPAssociation? }
    private static let registry = Registry()

    static func start() {
        registry.lock.withLock {
            guard !registry.started else { return }
            registry.started = true
            parley_usrsctp_init_nothreads(sendFromUsrsctp)
            usrsctp_sysctl_set_sctp_ecn_enable(0)
        }
    }

    static func nextID() -> Int {
        registry.lock.withLock {
            registry.lastID += 1
            return registry.lastID
        }
    }

    static func register(_ association: SCTPAssociation, id: Int) {
        registry.lock.withLock { registry.associations[id] = Weak(association: association) }
    }

    static func unregister(id: Int) {
        _ = registry.lock.withLock { registry.associations.removeValue(forKey: id) }
    }

    static func association(_ address: UnsafeMutableRawPointer?) -> SCTPAssociation? {
        guard let address else { return nil }
        let id = Int(bitPattern: address)
        return registry.lock.withLock { registry.associations[id]?.association }
    }

    /// Runs usrsctp's timers; call every few tens of milliseconds with the time since the last call.
    static func handleTimers(elapsedMilliseconds: UInt32) {
        guard registry.lock.withLock({ registry.started }) else { return }
        usrsctp_handle_timers(elapsedMilliseconds)
    }
}

/// usrsctp's packet output: hands the packet to the association's DTLS.
private func sendFromUsrsctp(_ address: UnsafeMutableRawPointer?, _ buffer: UnsafeMutableRawPointer?, _ length: Int, _ tos: UInt8, _ setDF: UInt8) -> Int32 {
    guard let buffer, let association = UsrsctpStack.association(address) else { return -1 }
    association.emit(UnsafeRawBufferPointer(start: buffer, count: length))
    return 0
}

/// usrsctp's receive callback: hands a message (or part of one) to its association.
private func receiveFromUsrsctp(
    _ socket: OpaquePointer?, _ address: sctp_sockstore, _ data: UnsafeMutableRawPointer?, _ length: Int,
    _ info: sctp_rcvinfo, _ flags: Int32, _ context: UnsafeMutableRawPointer?
) -> Int32 {
    guard let data else { return 1 }
    defer { free(data) }
    UsrsctpStack.association(context)?.received(
        UnsafeRawBufferPointer(start: data, count: length), stream: info.rcv_sid, ppid: UInt32(bigEndian: info.rcv_ppid), flags: flags
    )
    return 1
}
