import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why an HTTP exchange of `HTTPClient` failed before a complete response arrived.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// No connection could be made: refused, unknown host, DNS, TLS, no network.
        case connectionFailed
        /// The connection broke after it was made, for example in the middle of a body.
        case connectionLost
        /// The transport's own timeout expired.
        case timedOut
        /// The response body was larger than the caller allowed.
        case responseTooLarge
        /// The request could not be sent as given (bad URL, unsupported scheme).
        case invalidRequest
        /// The request's outbound policy refused the address its host resolves to; nothing was sent.
        case addressRefused
        /// A redirect of a request with an outbound policy led to another host; it was not followed.
        case redirectRefused
        /// Anything else the transport reported.
        case other
    }

    /// The kind of failure.
    public var kind: Kind
    /// A human-readable explanation.
    public var message: String
    /// The transport's error, if any.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ kind: Kind, message: String, underlying: (any Error & Sendable)? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    /// Classifies a transport error; `nil` when it means the request was cancelled.
    /// On Linux, libcurl failures without a closer match (a body cut off, an empty reply) arrive
    /// as `URLError.unknown`; they mean the connection broke.
    static func classifying(_ error: any Error) -> HTTPClientError? {
        guard let urlError = error as? URLError else {
            return HTTPClientError(.other, message: "\(error)", underlying: error)
        }
        let kind: Kind
        switch urlError.code {
        case .cancelled:
            return nil
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
             .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
             .clientCertificateRequired, .cannotLoadFromNetwork, .internationalRoamingOff, .dataNotAllowed:
            kind = .connectionFailed
        case .unknown, .networkConnectionLost, .cannotParseResponse, .badServerResponse, .zeroByteResource,
             .cannotDecodeRawData, .cannotDecodeContentData:
            kind = .connectionLost
        case .timedOut:
            kind = .timedOut
        case .badURL, .unsupportedURL:
            kind = .invalidRequest
        default:
            kind = .other
        }
        return HTTPClientError(kind, message: urlError.localizedDescription, underlying: urlError)
    }
}
