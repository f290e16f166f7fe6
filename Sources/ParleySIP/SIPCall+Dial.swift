import CLibre
import Foundation

/// A call Parley places (RFC 3261 §13.2): the INVITE with our offer through the trunk, a digest
/// answer to its challenge, the callee's ringing, the answer's codec, and the outcome on
/// `dialProgress` — answered, or busy, unanswered, rejected or failed.
extension SIPCall {
    /// Sends the INVITE of `dial` (from `fromURI`, with an offer at `advertised`, RTP bound on
    /// `bindAddress` within `ports`) and starts the ring timeout; what went wrong, if anything.
    func place(
        _ dial: SIPDial, sessions: OpaquePointer, fromURI: String, bindAddress: sa, advertised: sa, ports: ClosedRange<UInt16>
    ) -> String? {
        do throws(OfferProblem) {
            try openMedia(bindAddress: bindAddress, advertised: advertised, ports: ports, codecs: dial.codecs)
        } catch {
            return "no RTP port could be bound"
        }
        var offer: UnsafeMutablePointer<mbuf>?
        guard let sdp, sdp_encode(&offer, sdp, true) == 0 else { return "the SDP offer could not be made" }
        defer { _ = mem_deref(offer) }
        credentials = dial.credentials
        // A trunk is a loose route (RFC 3261 §16.12): the request URI stays the callee's.
        let route = dial.trunk.map { $0.lowercased().contains(";lr") ? $0 : $0 + ";lr" }
        let context = Unmanaged.passUnretained(self).toOpaque()
        var session: OpaquePointer?
        let status = parley_sipsess_connect(
            &session, sessions, dial.target, "Parley", fromURI, "parley", route, offer, sipAuthenticate, context,
            sipOffer, sipAnswer, sipProgress, sipEstablished, sipClosed, context, SIPEndpoint.allowHeader
        )
        guard status == 0, let session else { return "the INVITE could not be sent (\(String(cString: strerror(status))))" }
        self.session = session
        id = sipsess_dialog(session).flatMap { sip_dialog_callid($0) }.map { String(cString: $0) } ?? ""
        let milliseconds = dial.ringTimeout.components.seconds * 1_000 + dial.ringTimeout.components.attoseconds / 1_000_000_000_000_000
        tmr_start(ringTimer, UInt64(max(1, milliseconds)), sipRingTimedOut, context)
        return nil
    }

    /// A provisional response: the callee's phone rings (180, or 183 with early media).
    func progressed(_ message: UnsafePointer<sip_msg>) {
        guard !hasRung, [180, 183].contains(message.pointee.scode) else { return }
        hasRung = true
        dialContinuation.yield(.ringing)
    }

    /// The callee's answer to our offer (in its 200): the codec, where audio goes. Without a
    /// codec in common the call fails (libre then hangs it up).
    func answeredDial(_ message: UnsafePointer<sip_msg>) -> Int32 {
        do throws(OfferProblem) {
            try decode(message, isOffer: false)
        } catch {
            settleDial(.failed(.failed(status: nil, reason: "the answer had no codec we speak")))
            return EPROTO
        }
        // Symmetric RTP may come from where the answer came from, as well as from its SDP address.
        expectedHosts.insert(message.pointee.src.hostText)
        prepareCodec()
        return 0
    }

    /// The 200 was acknowledged: the call is up, and its audio starts.
    func establishedDial() {
        tmr_cancel(ringTimer)
        isAnswered = true
        settleDial(.answered)
        established()
        tick()
    }

    /// Nobody answered in time: the call is given up (libre cancels the INVITE as the session is freed).
    func ringTimedOut() {
        guard !isAnswered, !isEnded else { return }
        settleDial(.failed(.noAnswer(status: nil)))
        end(reason: "no answer within the ring timeout")
    }

    /// Reports how the dialling ended, once.
    func settleDial(_ progress: SIPDialProgress) {
        guard !isDialSettled else { return }
        isDialSettled = true
        dialContinuation.yield(progress)
        dialContinuation.finish()
    }

    /// The username and password for a challenge, as libre wants them (its own strings).
    fileprivate func answerChallenge(
        username: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, password: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    ) -> Int32 {
        guard let credentials else { return EAUTH }
        let status = str_dup(username, credentials.username)
        return status == 0 ? str_dup(password, credentials.password) : status
    }
}

/// libre's provisional-response handler of a placed call.
func sipProgress(_ message: UnsafePointer<sip_msg>?, _ context: UnsafeMutableRawPointer?) {
    guard let message, let context else { return }
    Unmanaged<SIPCall>.fromOpaque(context).takeUnretainedValue().progressed(message)
}

/// libre's digest handler of a placed call: the trunk's credentials, or `EAUTH` without them.
func sipAuthenticate(
    _ username: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ password: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ realm: UnsafePointer<CChar>?, _ context: UnsafeMutableRawPointer?
) -> Int32 {
    guard let username, let password, let context else { return EINVAL }
    return Unmanaged<SIPCall>.fromOpaque(context).takeUnretainedValue().answerChallenge(username: username, password: password)
}

/// libre's timer handler: a placed call's ring timeout.
func sipRingTimedOut(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<SIPCall>.fromOpaque(context).takeUnretainedValue().ringTimedOut()
}
