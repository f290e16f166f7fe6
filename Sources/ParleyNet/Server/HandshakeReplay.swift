import CLibWebsockets
import Foundation

/// Replays a WebSocket handshake whose `Sec-WebSocket-Protocol` exceeds libwebsockets' limits.
///
/// lws 4.1 refuses a subprotocol header of 127 bytes or more, yet browsers authenticate with
/// `realtime, openai-insecure-api-key.<token>`, which a signed token easily makes longer. Once
/// the route accepted such a request, the server takes the socket away from the lws connection
/// (keeping a duplicate descriptor) and adopts it again with a rewritten handshake offering
/// only the chosen subprotocol, marked with a one-time id under which the original request and
/// route wait. lws then completes the handshake as usual.
///
/// Only plain-text sockets can be handed over like this; over TLS the session state lives in
/// lws, so such requests get 431 there (terminate TLS in a proxy, or keep tokens short).
enum HandshakeReplay {
    /// The header carrying the replay id in the rewritten handshake.
    static let headerName = "x-parley-handshake-replay"

    /// The rewritten handshake: only what lws needs to answer with `subprotocol`.
    static func request(key: String, host: String, subprotocol: String?, id: String) -> String {
        var text = "GET / HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocol { text += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        text += "\(headerName): \(id)\r\n\r\n"
        return text
    }
}

extension HTTPServerCore {
    /// Service thread: hands the socket of `wsi` over to a fresh lws connection that replays
    /// the handshake; returns the callback result that closes the original connection.
    func replayHandshake(_ wsi: OpaquePointer, _ pending: PendingUpgrade) -> Int32 {
        guard configuration.tls == nil else {
            return refuseUpgrade(wsi, .error(status: 431, code: "subprotocol_header_too_long",
                message: "Over TLS, Sec-WebSocket-Protocol may be at most \(SubprotocolOffer.maxHeaderLength) bytes."))
        }
        guard let key = LWSRequestHead.value(wsi, WSI_TOKEN_KEY), let host = LWSRequestHead.value(wsi, WSI_TOKEN_HOST),
              let vhost, let loop
        else {
            return refuseUpgrade(wsi, .error(status: 400, code: "bad_handshake", message: "The WebSocket handshake is incomplete."))
        }
        let descriptor = lws_get_socket_fd(wsi)
        let handedOver = dup(descriptor)
        guard descriptor >= 0, handedOver >= 0 else {
            return refuseUpgrade(wsi, .error(status: 503, code: "no_descriptors", message: "The server is out of file descriptors."))
        }
        // The original connection now owns a dead socket pair end, so closing it (lws shuts
        // down and closes its descriptor) leaves the client's socket untouched.
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            close(handedOver)
            return refuseUpgrade(wsi, .error(status: 503, code: "no_descriptors", message: "The server is out of file descriptors."))
        }
        dup2(pair[0], descriptor)
        close(pair[0])
        close(pair[1])

        let id = UUID().uuidString
        replayedUpgrades[id] = pending
        let request = HandshakeReplay.request(key: key, host: host, subprotocol: pending.subprotocol, id: id)
        loop.afterService { [self] in
            let adopted = request.withCString { text in
                lws_adopt_socket_vhost_readbuf(vhost, handedOver, text, strlen(text))
            }
            // On failure lws closed the descriptor; the client sees the connection drop.
            if adopted == nil { replayedUpgrades[id] = nil }
        }
        return -1
    }

    /// Service thread: the replayed handshake arrived; bind the waiting upgrade to it.
    func acceptReplayedHandshake(_ wsi: OpaquePointer, id: String) -> Int32 {
        guard let pending = replayedUpgrades.removeValue(forKey: id) else {
            return refuseUpgrade(wsi, .error(status: 400, code: "bad_handshake", message: "Unknown handshake replay."))
        }
        setSubprotocolName(pending.subprotocol ?? "")
        attach(wsi, pending)
        return 0
    }
}
