import COpenSSL
import Foundation

/// TLS for one `https://` connection of `LWSHTTPTransport`, run in memory: the bytes the socket
/// received go in through `receive`, the bytes to send come out of `takeOutgoing`, and the
/// connection reads and writes plaintext in between. The server must present a certificate a
/// trusted authority signed for `serverName` (also sent as SNI when it is a name).
///
/// libwebsockets 4.1 cannot run TLS on its raw client connections itself (the handshake fails
/// before it starts), hence OpenSSL on memory BIOs here. Service thread only.
final class TLSClientSession {
    /// Where the handshake stands after the bytes received so far.
    enum Handshake {
        case inProgress
        case done
        case failed(String)
    }

    private let ssl: OpaquePointer
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer
    private let serverName: String
    /// Whether the handshake is done.
    private(set) var isEstablished = false

    /// Prepares the handshake with `serverName` (a host name or a numeric address).
    /// - Throws: `HTTPClientError` `.connectionFailed` when OpenSSL cannot set it up.
    init(context: TLSClientContext, serverName: String) throws(HTTPClientError) {
        guard let ssl = SSL_new(context.context) else {
            throw HTTPClientError(.connectionFailed, message: "OpenSSL could not start a TLS connection (\(Self.lastError()))")
        }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw HTTPClientError(.connectionFailed, message: "OpenSSL could not allocate buffers (\(Self.lastError()))")
        }
        // An empty memory BIO reads as "retry later", not end of file.
        BIO_ctrl(incoming, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        BIO_ctrl(outgoing, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, incoming, outgoing)
        SSL_set_connect_state(ssl)
        let checksName: Bool
        if IPAddress(serverName) != nil {
            checksName = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1
        } else {
            // SNI (`SSL_set_tlsext_host_name`, a macro); OpenSSL copies the name.
            _ = serverName.withCString { SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name), UnsafeMutableRawPointer(mutating: $0)) }
            checksName = SSL_set1_host(ssl, serverName) == 1
        }
        let http11: [UInt8] = [8] + Array("http/1.1".utf8)
        guard checksName, SSL_set_alpn_protos(ssl, http11, UInt32(http11.count)) == 0 else {
            SSL_free(ssl)
            throw HTTPClientError(.connectionFailed, message: "OpenSSL could not set up the TLS connection to \(serverName) (\(Self.lastError()))")
        }
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        self.serverName = serverName
    }

    deinit { SSL_free(ssl) }

    /// Feeds bytes the socket received.
    func receive(_ bytes: UnsafeRawBufferPointer) {
        _ = BIO_write(incoming, bytes.baseAddress, Int32(bytes.count))
    }

    /// Takes the handshake as far as the bytes received allow (the first call writes the hello).
    func advanceHandshake() -> Handshake {
        guard !isEstablished else { return .done }
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isEstablished = true
            return .done
        }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .inProgress }
        let verification = SSL_get_verify_result(ssl)
        if verification != X509_V_OK {
            return .failed("the TLS certificate of \(serverName) was refused: \(String(cString: X509_verify_cert_error_string(verification)))")
        }
        return .failed("the TLS handshake with \(serverName) failed (\(Self.lastError()))")
    }

    /// The plaintext the records received so far carry; `nil` once the server closed TLS.
    /// - Throws: `HTTPClientError` `.connectionLost` for a record that does not decrypt.
    func readPlaintext() throws(HTTPClientError) -> Data? {
        var plaintext = Data()
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = SSL_read(ssl, &buffer, Int32(buffer.count))
            if count > 0 {
                plaintext.append(contentsOf: buffer[0..<Int(count)])
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return plaintext
            case SSL_ERROR_ZERO_RETURN: return plaintext.isEmpty ? nil : plaintext
            default: throw HTTPClientError(.connectionLost, message: "TLS from \(serverName) broke (\(Self.lastError()))")
            }
        }
    }

    /// Encrypts `plaintext` (the records then wait in `takeOutgoing`).
    /// - Throws: `HTTPClientError` `.connectionLost` when OpenSSL refuses.
    func write(_ plaintext: Data) throws(HTTPClientError) {
        let written = plaintext.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        guard written == plaintext.count else {
            throw HTTPClientError(.connectionLost, message: "TLS to \(serverName) could not be written (\(Self.lastError()))")
        }
    }

    /// The bytes OpenSSL wrote since the last call, to send.
    func takeOutgoing() -> Data {
        let pending = BIO_ctrl(outgoing, BIO_CTRL_PENDING, 0, nil)
        guard pending > 0 else { return Data() }
        var bytes = Data(count: pending)
        let count = bytes.withUnsafeMutableBytes { BIO_read(outgoing, $0.baseAddress, Int32(pending)) }
        return count > 0 ? bytes.prefix(Int(count)) : Data()
    }

    /// OpenSSL's most recent error on this thread, as text.
    static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no detail" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
