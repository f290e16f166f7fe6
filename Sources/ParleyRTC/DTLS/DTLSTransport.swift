import COpenSSL
import Foundation

/// One call's DTLS server (RFC 5764): records in through `receive`, records out through
/// `takeOutgoing`, on OpenSSL memory BIOs. Once the handshake is done it yields the SRTP
/// keying material, and carries SCTP packets as application data.
///
/// Not thread-safe: used only on the RTC event loop's thread.
final class DTLSTransport {
    /// What a received record produced.
    enum Outcome {
        case nothing
        /// The handshake finished and the peer's certificate matched the offer's fingerprint.
        case connected(SRTPKeys)
        /// Application data (SCTP packets).
        case data([UInt8])
        /// The handshake failed, the fingerprint did not match, or the peer closed.
        case failed(String)
    }

    private let ssl: OpaquePointer
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer
    private let expectedFingerprint: [UInt8]
    private(set) var isConnected = false

    init(certificate: DTLSCertificate, expectedFingerprint: [UInt8]) throws(RTCError) {
        guard let ssl = SSL_new(certificate.context) else { throw .crypto("SSL_new") }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .crypto("BIO_new")
        }
        // An empty memory BIO reads as "retry later", not end of file.
        BIO_ctrl(incoming, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        BIO_ctrl(outgoing, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, incoming, outgoing)
        SSL_set_accept_state(ssl)
        // Records sized for a UDP path with a 1200-byte MTU, as browsers assume.
        SSL_set_options(ssl, 1 << 12) // SSL_OP_NO_QUERY_MTU
        SSL_ctrl(ssl, DTLS_CTRL_SET_LINK_MTU, 1200, nil)
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        self.expectedFingerprint = expectedFingerprint
    }

    deinit { SSL_free(ssl) }

    /// Feeds one received datagram (DTLS records).
    func receive(_ datagram: UnsafeRawBufferPointer) -> Outcome {
        _ = BIO_write(incoming, datagram.baseAddress, Int32(datagram.count))
        if !isConnected {
            let result = SSL_do_handshake(ssl)
            if result == 1 { return finishHandshake() }
            let error = SSL_get_error(ssl, result)
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .nothing }
            return .failed("DTLS handshake failed (\(Self.lastError()))")
        }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = SSL_read(ssl, &buffer, Int32(buffer.count))
            if count > 0 {
                data += buffer.prefix(Int(count))
                continue
            }
            let error = SSL_get_error(ssl, count)
            if error == SSL_ERROR_ZERO_RETURN { return .failed("the peer closed DTLS") }
            if error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE && data.isEmpty {
                return .failed("DTLS read failed (\(Self.lastError()))")
            }
            break
        }
        return data.isEmpty ? .nothing : .data(data)
    }

    /// Encrypts `data` (an SCTP packet) as one application record: the datagram to send.
    /// One packet per datagram: a datagram carrying many would outgrow the path (or UDP).
    func seal(_ data: UnsafeRawBufferPointer) -> [UInt8]? {
        guard isConnected, SSL_write(ssl, data.baseAddress, Int32(data.count)) > 0 else { return nil }
        return takeOutgoing()
    }

    /// Retransmits the last flight if its timer ran out (RFC 6347 §4.2.4).
    func handleTimeout() {
        guard !isConnected else { return }
        SSL_ctrl(ssl, DTLS_CTRL_HANDLE_TIMEOUT, 0, nil)
    }

    /// The records OpenSSL wrote since the last call, one datagram's worth.
    func takeOutgoing() -> [UInt8]? {
        let pending = BIO_ctrl(outgoing, BIO_CTRL_PENDING, 0, nil)
        guard pending > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: pending)
        let count = BIO_read(outgoing, &bytes, Int32(pending))
        return count > 0 ? Array(bytes.prefix(Int(count))) : nil
    }

    /// Sends the close_notify alert (the caller flushes `takeOutgoing`).
    func shutdown() {
        if isConnected { SSL_shutdown(ssl) }
    }

    private func finishHandshake() -> Outcome {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return .failed("the peer sent no certificate") }
        defer { X509_free(certificate) }
        guard let fingerprint = try? DTLSCertificate.fingerprint(of: certificate), fingerprint == expectedFingerprint else {
            return .failed("the peer's certificate does not match the offer's fingerprint")
        }
        guard let profile = SSL_get_selected_srtp_profile(ssl), profile.pointee.id == SRTP_AES128_CM_SHA1_80 else {
            return .failed("the peer negotiated no SRTP_AES128_CM_SHA1_80 profile")
        }
        var material = [UInt8](repeating: 0, count: 2 * (SRTPKeys.keyLength + SRTPKeys.saltLength))
        let label = "EXTRACTOR-dtls_srtp"
        guard SSL_export_keying_material(ssl, &material, material.count, label, label.utf8.count, nil, 0, 0) == 1 else {
            return .failed("exporting the SRTP keys failed")
        }
        isConnected = true
        return .connected(SRTPKeys(keyingMaterial: material, isServer: true))
    }

    private static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no detail" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
