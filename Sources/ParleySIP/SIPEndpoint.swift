import CLibre
import Foundation

/// A SIP user agent server on libre: UDP and TCP on one port, INVITEs admitted by the trunk
/// policy and answered by their owner (`incoming`), OPTIONS answered, everything else refused
/// by libre. Transactions, retransmissions, CANCEL and the dialogs are libre's.
///
/// `@unchecked Sendable`: the libre state (`sip`, `sessions`, `options`, `calls`) is touched
/// only on the `SIPLoop` thread; the rest is immutable after `init`.
public final class SIPEndpoint: @unchecked Sendable {
    /// Where and how the endpoint listens.
    public struct Settings: Sendable {
        /// The address to bind SIP and RTP to.
        public var host = "127.0.0.1"
        /// The SIP port, UDP and TCP (0: any free port, read back from `port`).
        public var port = 5060
        /// The address SDP answers give for audio, when not the one each INVITE arrived on
        /// (behind NAT: the public address).
        public var mediaAddress: String?
        /// The UDP ports RTP is bound in.
        public var rtpPorts: ClosedRange<UInt16> = 10_000...20_000
        /// Who may call.
        public var policy = SIPTrunkPolicy()
        /// Calls ringing (not yet answered or refused) at most, taken or placed; more INVITEs get
        /// `503`, more dials `DialError.tooManyCalls`.
        public var maximumRingingCalls = 64
        /// New calls a second each source address may start (a burst of twice as many); more get `503`.
        public var invitesPerSecond = 20

        /// Default settings: loopback, port 5060, the door shut.
        public init() {}
    }

    /// Why an INVITE was refused before its owner saw it.
    public struct Refusal: Sendable, Equatable {
        /// `address_not_allowed`, `authentication_failed`, `not_configured`, `malformed_offer`,
        /// `no_common_codec`, `too_many_calls`, `invite_rate_exceeded` or `media_unavailable`.
        public var reason: String
        /// The address it came from.
        public var source: String
    }

    /// Error opening the endpoint.
    public struct OpenError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Error placing a call: what was wrong with it.
    public struct DialError: Error, CustomStringConvertible {
        public var description: String
        /// Whether it was refused because `maximumRingingCalls` calls ring already.
        public var tooManyCalls = false
    }

    /// The `Allow` header every answer carries.
    static let allowHeader = "Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, NOTIFY\r\n"

    /// The port SIP listens on (UDP and TCP).
    public private(set) var port = 0
    /// Calls the policy let in, each ringing (180) until its owner answers or rejects it.
    public let incoming: AsyncStream<SIPCall>
    private let continuation: AsyncStream<SIPCall>.Continuation
    private let settings: Settings
    private let digest: SIPDigest?
    private let onRefusal: @Sendable (Refusal) -> Void
    private let loop = SIPLoop.shared

    // Loop thread only.
    private var sip: OpaquePointer?
    private var sessions: OpaquePointer?
    private var options: OpaquePointer?
    /// libre's event subscriptions (the NOTIFYs of a transfer's REFER).
    private(set) var subscriptions: OpaquePointer?
    private var calls: [ObjectIdentifier: SIPCall] = [:]
    private var bindAddress = sa()
    private var inviteBudget: SIPInviteBudget

    /// Binds UDP and TCP on `settings.port` and starts answering.
    /// - Parameter onRefusal: told of every INVITE refused before it rang, before the refusal is
    ///   sent (on the SIP thread: keep it short).
    /// - Throws: `OpenError` when the address cannot be bound.
    public init(settings: Settings, onRefusal: @escaping @Sendable (Refusal) -> Void) throws(OpenError) {
        self.settings = settings
        self.onRefusal = onRefusal
        digest = settings.policy.credentials.map(SIPDigest.init)
        inviteBudget = SIPInviteBudget(perSecond: settings.invitesPerSecond)
        (incoming, continuation) = AsyncStream.makeStream(of: SIPCall.self, bufferingPolicy: .unbounded)
        let problem: String? = loop.run { [self] in open() }
        if let problem { throw OpenError(description: problem) }
    }

    /// Hangs up every call and stops listening.
    public func close() {
        loop.run { [self] in
            for call in Array(calls.values) { call.terminate(reason: "the server shut down") }
            // Ended calls' BYEs may still wait for their answers: libre ends those transactions
            // itself first, timers and all. Freeing the sessions under them instead left freed
            // timers in libre's list, which crashed the process soon after.
            sip_close(sip, true)
            sessions = release(sessions)
            subscriptions = release(subscriptions)
            options = release(options)
            sip = release(sip)
        }
        continuation.finish()
    }

    // MARK: Loop side

    private func open() -> String? {
        guard sa_set_str(&bindAddress, settings.host, UInt16(clamping: settings.port)) == 0 else {
            return "\(settings.host) is not an IP address to bind SIP to"
        }
        // UDP first, then TCP on the same port; a free UDP port may be taken on TCP, so port 0 tries again.
        var problem: String?
        for _ in 0..<(settings.port == 0 ? 20 : 1) {
            problem = bindTransports()
            guard problem != nil else { break }
            sip = release(sip)
        }
        if let problem { return problem }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard sipsess_listen(&sessions, sip, 32, sipInvite, context) == 0,
              sipevent_listen(&subscriptions, sip, 32, 32, nil, nil) == 0,
              sip_listen(&options, sip, true, sipRequest, context) == 0 else {
            return "libre could not listen for SIP sessions"
        }
        return nil
    }

    /// A SIP stack listening on UDP and TCP on one port; what went wrong, if anything.
    private func bindTransports() -> String? {
        guard sip_alloc(&sip, nil, 32, 32, 32, "Parley", nil, nil) == 0, let sip else { return "libre could not make a SIP stack" }
        var address = bindAddress
        guard parley_sip_transp_add(sip, SIP_TRANSP_UDP, &address) == 0 else {
            return "SIP cannot listen on UDP \(settings.host):\(settings.port) (in use?)"
        }
        var bound = sa()
        _ = sip_transp_laddr(sip, &bound, SIP_TRANSP_UDP, nil)
        port = Int(sa_port(&bound))
        sa_set_port(&address, UInt16(port))
        guard parley_sip_transp_add(sip, SIP_TRANSP_TCP, &address) == 0 else {
            return "SIP cannot listen on TCP \(settings.host):\(port) (in use?)"
        }
        return nil
    }

    /// Any request: OPTIONS is answered here; the rest goes to libre's sessions.
    fileprivate func request(_ message: UnsafePointer<sip_msg>) -> Bool {
        guard message.pointee.met.text == "OPTIONS", let sip else { return false }
        _ = parley_sip_reply(sip, message, 200, "OK", Self.allowHeader + "Accept: application/sdp\r\n")
        return true
    }

    /// A new INVITE: the trunk policy, the offer, then `180 Ringing` and the owner.
    fileprivate func invite(_ message: UnsafePointer<sip_msg>) {
        guard let sip, let sessions else { return }
        let source = message.pointee.src.hostText
        // Before anything else costs work: a flood gets one short reply per packet.
        guard inviteBudget.take(from: source, now: .now) else {
            onRefusal(Refusal(reason: "invite_rate_exceeded", source: source))
            _ = parley_sip_reply(sip, message, 503, "Service Unavailable", "Retry-After: 1\r\n")
            return
        }
        var answered: Bool?
        if let digest, let header = sip_msg_hdr(message, SIP_HDR_AUTHORIZATION) {
            answered = digest.verify(authorization: header.pointee.val, method: message.pointee.met)
        }
        switch settings.policy.verdict(source: source, digest: answered) {
        case .accept:
            break
        case .challenge:
            _ = parley_sip_reply(sip, message, 401, "Unauthorized", digest?.challengeHeader() ?? "")
            return
        case .refuse(let reason):
            onRefusal(Refusal(reason: reason, source: source))
            _ = parley_sip_reply(sip, message, 403, "Forbidden", "")
            return
        }
        guard calls.count < settings.maximumRingingCalls + answeredCount else {
            onRefusal(Refusal(reason: "too_many_calls", source: source))
            _ = parley_sip_reply(sip, message, 503, "Service Unavailable", "Retry-After: 5\r\n")
            return
        }
        let call = SIPCall(message: message, endpoint: self)
        do throws(SIPCall.OfferProblem) {
            try call.negotiate(offer: message, bindAddress: bindAddress, advertised: advertisedAddress(for: message), ports: settings.rtpPorts)
        } catch {
            let (status, phrase, reason): (UInt16, String, String) = switch error {
            case .malformed: (400, "Bad Request", "malformed_offer")
            case .noCommonCodec: (488, "Not Acceptable Here", "no_common_codec")
            case .noMediaPort: (500, "Server Internal Error", "media_unavailable")
            }
            onRefusal(Refusal(reason: reason, source: source))
            _ = parley_sip_reply(sip, message, status, phrase, status == 488 ? "Warning: 305 parley \"Incompatible media format: Opus, PCMU or PCMA\"\r\n" : "")
            call.end(reason: reason)
            return
        }
        // 180 at once, so no 100 Trying is due (RFC 3261 §17.2.1): the call rings while it is admitted.
        var session: OpaquePointer?
        let context = Unmanaged.passUnretained(call).toOpaque()
        guard parley_sipsess_accept(
            &session, sessions, message, 180, "Ringing", "parley", sipOffer, sipAnswer, sipEstablished, sipClosed, context, Self.allowHeader
        ) == 0 else {
            call.end(reason: "the call could not be accepted")
            return
        }
        call.session = session
        calls[ObjectIdentifier(call)] = call
        continuation.yield(call)
    }

    /// Places a call as `dial` says: the INVITE goes out at once, and the call reports how it
    /// goes on `dialProgress`; once answered it is like a call that came in.
    /// - Throws: `DialError` when a URI holds what cannot go in a header, the endpoint is closed,
    ///   or the INVITE cannot be sent.
    public func dial(_ dial: SIPDial) throws(DialError) -> SIPCall {
        for (name, value) in [("target", dial.target), ("trunk", dial.trunk ?? "sip:x"), ("caller", dial.caller)] {
            guard !value.isEmpty, value.count <= 256, value.unicodeScalars.allSatisfy(Self.isHeaderSafe) else {
                throw DialError(description: "the \(name) \"\(value)\" has characters a SIP header cannot carry")
            }
        }
        let placed: Result<SIPCall, DialError> = loop.run { [self] in
            guard let sessions else { return .failure(DialError(description: "the SIP endpoint is closed")) }
            guard calls.count - answeredCount < settings.maximumRingingCalls else {
                return .failure(DialError(description: "\(settings.maximumRingingCalls) calls are ringing already", tooManyCalls: true))
            }
            let advertised = localAddress()
            let host = advertised.hostText
            let fromURI = "sip:\(dial.caller)@\(host.contains(":") ? "[\(host)]" : host)"
            let call = SIPCall(dialing: dial, fromHeader: "\"Parley\" <\(fromURI)>", endpoint: self)
            if let problem = call.place(dial, sessions: sessions, fromURI: fromURI, bindAddress: bindAddress, advertised: advertised, ports: settings.rtpPorts) {
                call.end(reason: problem)
                return .failure(DialError(description: problem))
            }
            calls[ObjectIdentifier(call)] = call
            return .success(call)
        }
        return try placed.get()
    }

    /// A character that may stand in a URI of a header: printable ASCII, no quotes or brackets.
    private static func isHeaderSafe(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0x20 && scalar.value < 0x7F && !"<>\"".unicodeScalars.contains(scalar)
    }

    private var answeredCount: Int { calls.values.count { $0.isAnswered } }

    /// The address audio is offered at: the configured one, else the one the INVITE reached.
    private func advertisedAddress(for message: UnsafePointer<sip_msg>) -> sa {
        var address = sa()
        if let configured = settings.mediaAddress, sa_set_str(&address, configured, 0) == 0 { return address }
        var destination = message.pointee.dst
        if sa_isset(&destination, Int32(SA_ADDR.rawValue)), !["0.0.0.0", "::"].contains(destination.hostText) { return destination }
        return bindAddress
    }

    /// The address a placed call's offer gives for audio and its `From` names: the configured
    /// one, else the bound one, else (bound to every address) the one this host reaches out from.
    private func localAddress() -> sa {
        var address = sa()
        if let configured = settings.mediaAddress, sa_set_str(&address, configured, 0) == 0 { return address }
        address = bindAddress
        guard ["0.0.0.0", "::"].contains(address.hostText) else { return address }
        var source = sa()
        return net_default_source_addr_get(Int32(sa_af(&address)), &source) == 0 ? source : address
    }

    /// The SIP stack, for requests of a call's dialog.
    var stack: OpaquePointer? { sip }

    /// A call is over: no longer the endpoint's.
    func forget(_ call: SIPCall) {
        calls.removeValue(forKey: ObjectIdentifier(call))
    }
}

/// Frees a libre object; always `nil`.
func release(_ object: OpaquePointer?) -> OpaquePointer? {
    _ = mem_deref(UnsafeMutableRawPointer(object))
    return nil
}

private func endpoint(_ context: UnsafeMutableRawPointer?) -> SIPEndpoint? {
    context.map { Unmanaged<SIPEndpoint>.fromOpaque($0).takeUnretainedValue() }
}

private func call(_ context: UnsafeMutableRawPointer?) -> SIPCall? {
    context.map { Unmanaged<SIPCall>.fromOpaque($0).takeUnretainedValue() }
}

private func sipRequest(_ message: UnsafePointer<sip_msg>?, _ context: UnsafeMutableRawPointer?) -> Bool {
    guard let message else { return false }
    return endpoint(context)?.request(message) ?? false
}

private func sipInvite(_ message: UnsafePointer<sip_msg>?, _ context: UnsafeMutableRawPointer?) {
    guard let message else { return }
    endpoint(context)?.invite(message)
}

/// libre's handler of an offer in a call's dialog (a re-INVITE).
func sipOffer(
    _ answer: UnsafeMutablePointer<UnsafeMutablePointer<mbuf>?>?, _ message: UnsafePointer<sip_msg>?, _ context: UnsafeMutableRawPointer?
) -> Int32 {
    guard let answer, let message, let call = call(context) else { return EINVAL }
    return call.reoffer(message, answer: answer)
}

/// libre's handler of an answer to our offer.
func sipAnswer(_ message: UnsafePointer<sip_msg>?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let message, let call = call(context) else { return EINVAL }
    return call.answered(message)
}

/// libre's handler of a call that is up (ACK received, or our ACK sent).
func sipEstablished(_ message: UnsafePointer<sip_msg>?, _ context: UnsafeMutableRawPointer?) {
    call(context)?.established()
}

/// libre's handler of a call's session closing.
func sipClosed(_ error: Int32, _ message: UnsafePointer<sip_msg>?, _ context: UnsafeMutableRawPointer?) {
    call(context)?.closed(error: error, message: message)
}
