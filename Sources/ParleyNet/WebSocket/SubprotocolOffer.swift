/// The subprotocols a client offered in `Sec-WebSocket-Protocol`, checked against what the
/// route chose and against libwebsockets' limits (it refuses headers of 127 bytes or more and
/// names of 64 bytes or more).
struct SubprotocolOffer {
    /// The longest header lws accepts.
    static let maxHeaderLength = 126
    /// The longest name lws accepts.
    static let maxNameLength = 63

    /// The raw header value, `nil` when absent.
    let header: String?
    /// The offered names, in order.
    let names: [String]

    init(header: String?) {
        self.header = header
        let allowed = Set("!#$%&'*+-.^_`|~").union("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        names = (header ?? "").split { !allowed.contains($0) }.map(String.init)
    }

    /// The response refusing the upgrade, or `nil` when answering `choice` is possible.
    func problem(choosing choice: String?, reserved: [String]) -> HTTPResponse? {
        guard let header, !names.isEmpty else {
            if let choice {
                return .error(status: 500, code: "subprotocol_not_offered",
                    message: "The server chose subprotocol \(choice), which the client did not offer.")
            }
            return nil
        }
        if header.utf8.count > Self.maxHeaderLength {
            return .error(status: 431, code: "subprotocol_header_too_long",
                message: "Sec-WebSocket-Protocol may be at most \(Self.maxHeaderLength) bytes.")
        }
        guard let choice else {
            return .error(status: 400, code: "unsupported_subprotocol",
                message: "None of the offered subprotocols is supported.")
        }
        guard let position = names.firstIndex(of: choice) else {
            return .error(status: 500, code: "subprotocol_not_offered",
                message: "The server chose subprotocol \(choice), which the client did not offer.")
        }
        for name in names[...position] {
            if name.utf8.count > Self.maxNameLength {
                return .error(status: 431, code: "subprotocol_name_too_long",
                    message: "Subprotocol names may be at most \(Self.maxNameLength) bytes.")
            }
            if reserved.contains(name) {
                return .error(status: 400, code: "reserved_subprotocol", message: "Subprotocol \(name) is reserved.")
            }
        }
        return nil
    }
}
