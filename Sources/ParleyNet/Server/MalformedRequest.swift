import CLibWebsockets
import Foundation

/// A connection whose bytes lws could not parse as HTTP: it gets a 400 and is closed.
final class MalformedRequest {
    /// The response sent to unparseable requests.
    static let response = HTTPResponse.error(
        status: 400, code: "bad_request", message: "The request could not be parsed as HTTP/1.1.")

    /// Answers once, then asks for a writable callback that closes the connection.
    static func answer(_ wsi: OpaquePointer, core: HTTPServerCore) -> Int32 {
        guard !(core.attached(wsi) is MalformedRequest) else { return 0 }
        core.attach(wsi, MalformedRequest())
        guard case .data(let body) = response.body else { return -1 }
        var bytes = HTTPResponseHead.serialize(
            status: response.status, headers: response.headers, framing: .contentLength(body.count), keepAlive: false)
        bytes.append(body)
        guard LWSWrite.write(wsi, bytes, mode: LWS_WRITE_HTTP) else { return -1 }
        lws_callback_on_writable(wsi)
        return 0
    }
}
