import Foundation
import ParleySIP
import ParleySync

/// The backend's hold on SIP calls, the OpenAI way: a ringing call waits for its decision
/// (`POST /v1/realtime/calls/{id}/accept` or `/reject`) after the `realtime.call.incoming`
/// webhook; a live call can be transferred (`/refer`) or hung up (`/hangup`).
final class SIPCallControl: Sendable {
    /// What the backend decided for a ringing call.
    enum Decision: Sendable {
        /// Answer it as a session of `agentID` (else the agent of the called number), with the
        /// session settings of `sessionUpdate` (a `session.update` event) applied first.
        case accept(agentID: String?, sessionUpdate: String?)
        /// Refuse it with this SIP status.
        case reject(status: UInt16)
    }

    /// A ringing call: announced, decided before anyone waited, or waited for.
    private enum Ringing {
        case announced
        case decided(Decision)
        case waiting(CheckedContinuation<Decision?, Never>)
    }

    private let ringing = Locked<[String: Ringing]>([:])
    private let live = Locked<[String: SIPCall]>([:])

    /// Takes decisions for `callID` from now on (before the webhook goes out, which may be answered at once).
    func announce(_ callID: String) { ringing.withLock { $0[callID] = .announced } }

    /// Waits for the backend's decision on the announced `callID`; `nil` when none came within `limit`.
    func decision(on callID: String, within limit: Duration) async -> Decision? {
        let timer = Task { [self] in
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            if case .waiting(let continuation)? = ringing.withLock({ $0.removeValue(forKey: callID) }) { continuation.resume(returning: nil) }
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let ready: Decision?? = ringing.withLock { calls in
                switch calls[callID] {
                case .decided(let decision)?:
                    calls[callID] = nil
                    return .some(decision)
                case .announced?, .waiting?:
                    calls[callID] = .waiting(continuation)
                    return .none
                case nil:
                    return .some(nil)
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Stops taking decisions for an announced call (its webhook failed).
    func forget(_ callID: String) { ringing.withLock { $0[callID] = nil } }

    /// Hands the backend's decision to the ringing call `callID`; `false` when no such call rings.
    func decide(_ callID: String, _ decision: Decision) -> Bool {
        let (taken, waiting): (Bool, CheckedContinuation<Decision?, Never>?) = ringing.withLock { calls in
            switch calls[callID] {
            case .announced?:
                calls[callID] = .decided(decision)
                return (true, nil)
            case .waiting(let continuation)?:
                calls[callID] = nil
                return (true, continuation)
            case .decided?, nil:
                return (false, nil)
            }
        }
        waiting?.resume(returning: decision)
        return taken
    }

    /// Records an answered call under `callID` until `remove`.
    func add(_ call: SIPCall, id callID: String) { live.withLock { $0[callID] = call } }

    /// Forgets a call that ended.
    func remove(_ callID: String) { live.withLock { $0[callID] = nil } }

    /// The answered call `callID`, while it lasts.
    func call(_ callID: String) -> SIPCall? { live.withLock { $0[callID] } }
}
