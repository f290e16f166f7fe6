import ParleyNet

/// Who may call: the trunks an operator configured, by address, by digest credentials, or both.
/// A call from an allowed address is taken as it comes; any other must answer a digest
/// challenge with the credentials; with neither configured, the door is shut.
public struct SIPTrunkPolicy: Sendable, Hashable {
    /// The networks trunks call from (`PARLEY_SIP_TRUNKS`).
    public var allowedAddresses: [IPAddressRange]
    /// The digest credentials a trunk calling from elsewhere proves (`PARLEY_SIP_USERNAME`, `PARLEY_SIP_PASSWORD`).
    public var credentials: Credentials?

    /// A trunk's digest username and password, in a realm.
    public struct Credentials: Sendable, Hashable {
        public var username: String
        public var password: String
        public var realm: String

        /// Credentials in `realm`.
        public init(username: String, password: String, realm: String = "parley") {
            self.username = username
            self.password = password
            self.realm = realm
        }
    }

    /// What to do with a request.
    public enum Verdict: Sendable, Equatable {
        /// Take it.
        case accept
        /// Ask for digest credentials (401).
        case challenge
        /// Refuse it (403), for `reason`.
        case refuse(reason: String)
    }

    /// A policy of `allowedAddresses` and `credentials`.
    public init(allowedAddresses: [IPAddressRange] = [], credentials: Credentials? = nil) {
        self.allowedAddresses = allowedAddresses
        self.credentials = credentials
    }

    /// Whether any call can get in.
    public var isOpen: Bool { !allowedAddresses.isEmpty || credentials != nil }

    /// The verdict on a request from `source`; `digest` says whether it carried credentials and
    /// whether they were right (`nil`: none).
    public func verdict(source: String, digest: Bool?) -> Verdict {
        if let address = IPAddress(source), allowedAddresses.contains(where: { $0.contains(address) }) { return .accept }
        guard credentials != nil else {
            return .refuse(reason: isOpen ? "address_not_allowed" : "not_configured")
        }
        switch digest {
        case nil: return .challenge
        case true?: return .accept
        case false?: return .refuse(reason: "authentication_failed")
        }
    }
}
