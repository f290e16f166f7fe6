import COpenSSL
import Foundation

/// The server's DTLS identity: an ECDSA P-256 key and a self-signed certificate made with
/// OpenSSL at start, and the `SSL_CTX` every call's DTLS handshake uses (DTLS 1.2, the
/// `use_srtp` extension offering SRTP_AES128_CM_SHA1_80, peer certificate required; the
/// peer is authenticated by comparing its certificate's fingerprint with the SDP offer's).
///
/// `@unchecked Sendable`: the context is configured once in `init` and only read after.
public final class DTLSCertificate: @unchecked Sendable {
    let context: OpaquePointer
    /// The certificate's SHA-256 fingerprint, for the SDP answer.
    public let fingerprint: [UInt8]

    /// Makes a fresh key and certificate.
    /// - Throws: `RTCError.crypto` when OpenSSL fails.
    public init() throws(RTCError) {
        guard let keyContext = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw .crypto("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(keyContext) == 1,
              EVP_PKEY_CTX_set_ec_paramgen_curve_nid(keyContext, NID_X9_62_prime256v1) == 1,
              EVP_PKEY_keygen(keyContext, &key) == 1, let key else { throw .crypto("EC key generation") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw .crypto("X509_new") }
        defer { X509_free(certificate) }
        X509_set_version(certificate, 2)
        ASN1_INTEGER_set(X509_get_serialNumber(certificate), Int.random(in: 1...Int(Int32.max)))
        X509_gmtime_adj(X509_getm_notBefore(certificate), -86_400)
        X509_gmtime_adj(X509_getm_notAfter(certificate), 30 * 86_400)
        X509_set_pubkey(certificate, key)
        let name = X509_get_subject_name(certificate)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "parley", -1, -1, 0)
        X509_set_issuer_name(certificate, name)
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw .crypto("X509_sign") }
        fingerprint = try Self.fingerprint(of: certificate)

        guard let context = SSL_CTX_new(DTLS_server_method()) else { throw .crypto("SSL_CTX_new") }
        self.context = context
        guard SSL_CTX_use_certificate(context, certificate) == 1, SSL_CTX_use_PrivateKey(context, key) == 1,
              SSL_CTX_set_tlsext_use_srtp(context, "SRTP_AES128_CM_SHA1_80") == 0 else {
            SSL_CTX_free(context)
            throw .crypto("configuring the DTLS context")
        }
        // A peer certificate is required; it is self-signed, so it is accepted here and its
        // fingerprint checked against the offer once the handshake is done.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, acceptSelfSignedCertificate)
        SSL_CTX_ctrl(context, SSL_CTRL_MODE, Int(SSL_MODE_AUTO_RETRY), nil)
    }

    deinit { SSL_CTX_free(context) }

    /// The SHA-256 digest of a certificate.
    static func fingerprint(of certificate: OpaquePointer) throws(RTCError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { throw .crypto("X509_digest") }
        return Array(digest.prefix(Int(length)))
    }
}

/// Accepts every chain: WebRTC certificates are self-signed; the fingerprint is what counts.
private func acceptSelfSignedCertificate(_ preverified: Int32, _ store: OpaquePointer?) -> Int32 { 1 }
