import Foundation

/// The tokens call webhooks hand out for the media stream, one per call: single-use and
/// short-lived, so a stream is accepted only for a call Parley answered moments before.
///
/// `@unchecked Sendable`: `grants` is guarded by `lock`.
final class TwilioStreamTokens: @unchecked Sendable {
    /// What a token grants: a stream for this call, answered by this agent.
    struct Grant: Sendable, Hashable {
        var callSID: String
        /// The agent that answers; `nil` for the server's default agent.
        var agentID: String?
        /// The calling number (`From`), whose concurrent calls are limited like a user's sessions.
        var caller: String = ""

        /// Whom the call's session counts against: the calling number, and the call itself.
        var owner: LiveSessions.Owner { LiveSessions.Owner(user: "phone:\(caller)", tokenID: "call:\(callSID)") }
    }

    private let lock = NSLock()
    private var grants: [String: (grant: Grant, expires: ContinuousClock.Instant)] = [:]
    private let lifetime: Duration
    private let clock = ContinuousClock()

    /// Creates a registry whose tokens expire after `lifetime`.
    init(lifetime: Duration) { self.lifetime = lifetime }

    /// A new token for `grant` (256 random bits, base64url).
    func issue(_ grant: Grant) -> String {
        let token = Base64URL.encode(HMACSHA256.randomBytes(32))
        let now = clock.now
        lock.withLock {
            grants = grants.filter { $0.value.expires > now }
            grants[token] = (grant, now + lifetime)
        }
        return token
    }

    /// Takes the token: its grant the first time within its lifetime, `nil` after that.
    func redeem(_ token: String) -> Grant? {
        let now = clock.now
        return lock.withLock {
            guard let entry = grants.removeValue(forKey: token), entry.expires > now else { return nil }
            return entry.grant
        }
    }
}
