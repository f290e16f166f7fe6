/// The subprotocols a client offered in `Sec-WebSocket-Protocol`, checked against what the
/// route chose and against libwebsockets' limits: lws refuses a header of 127 bytes or more,
/// and names of 64 bytes or more before the one it matches.
struct SubprotocolOffer {
    /// The longest header lws accepts.
    static let maxHeaderLength = 126
    /// The longest name lws accepts.
    static let maxNameLength = 63

    /// What answering a choice takes.
    enum Verdict {
        /// lws can answer it directly.
        case acceptable
        /// Valid, but the header exceeds lws' limits; the handshake must be replayed to lws
        /// with only the chosen name.
        case exceedsLibwebsocketsLimits
        /// Refuse the upgrade with this response.
        case refused(HTTPResponse)
    }

    /// The raw header value, `nil` when absent.
    let header: String?
    /// The offered names, in order.
    let names: [String]

    init(header: String?) {
        self.header = header
        let allowed = Set("!#$%&'*+-.^_`|~").union("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        names = (header ?? "").split { !allowed.contains($0) }.map(String.init)
    }

    /// Whether (and how) the server can answer with `choice`.
    func verdict(choosing choice: String?, reserved: [String]) -> Verdict {
        guard let header, !names.isEmpty else {
            if let choice {
                return .refused(.error(status: 500, code: "subprotocol_not_offered",
                    message: "The server chose subprotocol \(choice), which the client did not offer."))
            }
            return .acceptable
        }
        guard let choice else {
            return .refused(.error(status: 400, code: "unsupported_subprotocol",
                message: "None of the offered subprotocols is supported."))
        }
        guard let position = names.firstIndex(of: choice) else {
            return .refused(.error(status: 500, code: "subprotocol_not_offered",
                message: "The server chose subprotocol \(choice), which the client did not offer."))
        }
        if choice.utf8.count > Self.maxNameLength {
            return .refused(.error(status: 431, code: "subprotocol_name_too_long",
                message: "Subprotocol names may be at most \(Self.maxNameLength) bytes."))
        }
        if reserved.contains(choice) {
            return .refused(.error(status: 400, code: "reserved_subprotocol", message: "Subprotocol \(choice) is reserved."))
        }
        let earlier = names[..<position]
        if header.utf8.count > Self.maxHeaderLength
            || earlier.contains(where: { $0.utf8.count > Self.maxNameLength || reserved.contains($0) }) {
            return .exceedsLibwebsocketsLimits
        }
        return .acceptable
    }
}
