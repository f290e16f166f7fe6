import COpenSSL
import Foundation
import ParleySync

/// The OpenSSL settings of `https://` connections on `LWSHTTPTransport`: TLS 1.2 or later, and
/// servers verified against the system's certificate authorities, plus those of a PEM file when
/// the `HTTPClient` was given one.
///
/// `@unchecked Sendable`: the `SSL_CTX` is set up in `init` and never changed after, and OpenSSL
/// lets any thread make connections from such a context.
final class TLSClientContext: @unchecked Sendable {
    /// The `SSL_CTX`.
    let context: OpaquePointer
    /// The PEM file of certificate authorities trusted besides the system's, if any.
    let additionalTrust: String?

    private static let made = Locked<[String: TLSClientContext]>([:])

    /// The context for `additionalTrust`, made on first use and kept for the process.
    /// - Throws: `HTTPClientError` `.invalidRequest` when OpenSSL cannot set it up or read the file.
    static func shared(additionalTrust: String?) throws(HTTPClientError) -> TLSClientContext {
        let result = made.withLock { made -> Result<TLSClientContext, HTTPClientError> in
            let key = additionalTrust ?? ""
            if let existing = made[key] { return .success(existing) }
            do {
                let context = try TLSClientContext(additionalTrust: additionalTrust)
                made[key] = context
                return .success(context)
            } catch let error as HTTPClientError {
                return .failure(error)
            } catch {
                return .failure(HTTPClientError(.other, message: "\(error)"))
            }
        }
        return try result.get()
    }

    private init(additionalTrust: String?) throws(HTTPClientError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTPClientError(.invalidRequest, message: "OpenSSL could not create a TLS client context (\(TLSClientSession.lastError()))")
        }
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard SSL_CTX_set_default_verify_paths(context) == 1,
              additionalTrust.map({ SSL_CTX_load_verify_locations(context, $0, nil) == 1 }) ?? true else {
            let reason = TLSClientSession.lastError()
            SSL_CTX_free(context)
            throw HTTPClientError(.invalidRequest, message: "cannot load trusted certificates\(additionalTrust.map { " from \($0)" } ?? ""): \(reason)")
        }
        self.context = context
        self.additionalTrust = additionalTrust
    }

    deinit { SSL_CTX_free(context) }
}
