/// A call to place (`SIPEndpoint.dial`): whom, through which trunk, as whom.
public struct SIPDial: Sendable {
    /// The request URI, whom to call (`sip:+14155550123@trunk.example.com`).
    public var target: String
    /// The trunk every request goes through, as a loose route (`sip:trunk.example.com;transport=tcp`);
    /// `nil` sends the INVITE to the target's own host.
    public var trunk: String?
    /// The user part of `From`, usually the number calls come from (`+14155550100`).
    public var caller: String
    /// The username and password a trunk that challenges (401 or 407) is answered with.
    public var credentials: (username: String, password: String)?
    /// How long the call may go unanswered before it is given up (CANCEL) as `noAnswer`.
    public var ringTimeout: Duration
    /// The codecs the offer names, in order of preference (the callee's answer picks one).
    public var codecs: [SIPCodec]

    /// A call to `target` from `caller`.
    public init(
        target: String, trunk: String? = nil, caller: String, credentials: (username: String, password: String)? = nil,
        ringTimeout: Duration = .seconds(30), codecs: [SIPCodec] = SIPCodec.allCases
    ) {
        self.target = target
        self.trunk = trunk
        self.caller = caller
        self.credentials = credentials
        self.ringTimeout = ringTimeout
        self.codecs = codecs
    }

    /// The user part of `target` (`+14155550123`), empty when it has none.
    public var targetUser: String {
        let afterScheme = target.drop { $0 != ":" }.dropFirst()
        guard let at = afterScheme.firstIndex(of: "@") else { return "" }
        return String(afterScheme[..<at])
    }

    /// The host of the trunk, else of the target (`trunk.example.com`, `203.0.113.7`).
    var peerHost: String {
        let uri = trunk ?? target
        var rest = uri.drop { $0 != ":" }.dropFirst()
        if let at = rest.firstIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.first == "[" { return String(rest.dropFirst().prefix { $0 != "]" }) }
        return String(rest.prefix { $0 != ":" && $0 != ";" && $0 != "?" })
    }
}

/// How a call Parley places goes, in order: perhaps `ringing`, then `answered` or `failed`.
public enum SIPDialProgress: Sendable, Equatable {
    /// The callee's phone rings (180 or 183).
    case ringing
    /// The callee answered (200, acknowledged): the call's audio flows.
    case answered
    /// The call did not come about.
    case failed(SIPDialFailure)
}

/// Why a call Parley placed was not answered.
public enum SIPDialFailure: Sendable, Equatable {
    /// The callee is busy (486 or 600).
    case busy(status: Int)
    /// Nobody answered within the ring timeout (the call was cancelled), or the callee's side
    /// gave up ringing (408, 480).
    case noAnswer(status: Int?)
    /// The callee's side refused the call with another 4xx or 6xx.
    case rejected(status: Int, reason: String)
    /// The call could not be placed: the trunk unreachable, a 5xx, or no audio in common.
    case failed(status: Int?, reason: String)
    /// Parley gave the call up itself before it was answered (CANCEL): it was hung up, or the server shut down.
    case cancelled(reason: String)

    /// The failure a final response of `status` (300 or more) means.
    public init(status: Int, reason: String) {
        switch status {
        case 486, 600: self = .busy(status: status)
        case 408, 480: self = .noAnswer(status: status)
        case 500...599: self = .failed(status: status, reason: reason)
        default: self = .rejected(status: status, reason: reason)
        }
    }

    /// The SIP status it came with, if one did.
    public var status: Int? {
        switch self {
        case .busy(let status): status
        case .noAnswer(let status): status
        case .rejected(let status, _): status
        case .failed(let status, _): status
        case .cancelled: nil
        }
    }
}
