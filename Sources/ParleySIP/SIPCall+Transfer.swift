import CLibre
import Foundation

/// A SIP call's blind transfer (RFC 3515): REFER in the call's dialog through libre's sipevent,
/// the outcome from the caller's answer or its first NOTIFY.
extension SIPCall {
    /// How a blind transfer went.
    public enum TransferOutcome: Sendable, Equatable {
        /// The caller took the REFER and is calling the target.
        case accepted
        /// The REFER was refused, or the caller's call to the target failed, for this reason.
        case refused(String)
    }

    /// Transfers the caller to `target` (a SIP URI) with REFER (RFC 3515): the outcome once the
    /// caller accepted or refused it, or its first progress report arrived.
    public func transfer(to target: String) async -> TransferOutcome {
        await withCheckedContinuation { continuation in
            transferWaiter.withLock { $0 = continuation }
            loop.perform { [self] in startTransfer(to: target) }
        }
    }

    fileprivate func startTransfer(to target: String) {
        guard !isEnded, isAnswered, let session, let dialog = sipsess_dialog(session), let subscriptions = endpoint?.subscriptions else {
            return finishTransfer(.refused("the call is not up"))
        }
        transferSubscription = release(transferSubscription)
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard parley_sipevent_drefer(&transferSubscription, subscriptions, dialog, sipTransferNotified, sipTransferClosed, context, target) == 0 else {
            return finishTransfer(.refused("the REFER could not be sent"))
        }
    }

    /// A NOTIFY of the transfer: its `message/sipfrag` body says how the caller's call to the target goes.
    func transferNotified(_ sip: OpaquePointer?, _ message: UnsafePointer<sip_msg>) {
        let body = message.pointee.mb.map { String(decoding: UnsafeBufferPointer(start: mbuf_buf($0), count: mbuf_get_left($0)), as: UTF8.self) } ?? ""
        let status = body.split(separator: "\r\n").first?.split(separator: " ", maxSplits: 2) ?? []
        guard status.count >= 2, status[0].hasPrefix("SIP/2.0"), let code = Int(status[1]) else {
            _ = sip_reply(sip, message, 400, "Bad sipfrag")
            return
        }
        _ = sip_reply(sip, message, 200, "OK")
        finishTransfer(code >= 300 ? .refused(status.dropFirst().joined(separator: " ")) : .accepted)
    }

    /// The transfer's subscription ended: a refused REFER says why.
    func transferClosed(_ error: Int32, _ message: UnsafePointer<sip_msg>?) {
        transferSubscription = release(transferSubscription)
        if let message, !message.pointee.req, message.pointee.scode >= 300 {
            finishTransfer(.refused("\(message.pointee.scode) \(message.pointee.reason.text)"))
        } else if error != 0 {
            finishTransfer(.refused(String(cString: strerror(error))))
        } else {
            finishTransfer(.accepted)
        }
    }

    func finishTransfer(_ outcome: TransferOutcome) {
        transferWaiter.withLock { waiter in
            defer { waiter = nil }
            return waiter
        }?.resume(returning: outcome)
    }
}

/// libre's handler of a transfer's NOTIFYs.
func sipTransferNotified(_ sip: OpaquePointer?, _ message: UnsafePointer<sip_msg>?, _ context: UnsafeMutableRawPointer?) {
    guard let message, let context else { return }
    Unmanaged<SIPCall>.fromOpaque(context).takeUnretainedValue().transferNotified(sip, message)
}

/// libre's handler of the end of a transfer's subscription.
func sipTransferClosed(
    _ error: Int32, _ message: UnsafePointer<sip_msg>?, _ state: UnsafePointer<sipevent_substate>?, _ context: UnsafeMutableRawPointer?
) {
    guard let context else { return }
    Unmanaged<SIPCall>.fromOpaque(context).takeUnretainedValue().transferClosed(error, message)
}
