import ParleySync

/// Transfers the agents of Twilio calls asked for (`transfer_call`), by call: Media Streams
/// cannot redirect a call, so the stream closes after the agent's goodbye and Twilio asks the
/// `<Connect action>` URL what next (`TwilioStreamEnded`), which takes the transfer from here.
final class TwilioTransfers: Sendable {
    /// Transfers waiting at most; beyond it, the oldest calls' are dropped (their calls end instead).
    static let maximumPending = 10_000

    private let pending = Locked<(targets: [String: String], order: [String])>(([:], []))

    /// Call `callSID` goes to `target` (an E.164 number or a `sip:` URI) when its stream ends.
    func request(callSID: String, target: String) {
        pending.withLock { pending in
            if pending.targets.updateValue(target, forKey: callSID) == nil { pending.order.append(callSID) }
            while pending.order.count > Self.maximumPending { pending.targets[pending.order.removeFirst()] = nil }
        }
    }

    /// The transfer of call `callSID`, once: `nil` when none was asked for.
    func take(callSID: String) -> String? {
        pending.withLock { pending in
            guard let target = pending.targets.removeValue(forKey: callSID) else { return nil }
            pending.order.removeAll { $0 == callSID }
            return target
        }
    }
}
