import ParleyNet
import ParleySIP
import Testing

/// Who may call the SIP door: the trunk policy as a table of source, credentials → verdict.
@Suite struct SIPTrunkPolicyTests {
    static let credentials = SIPTrunkPolicy.Credentials(username: "trunk", password: "secret")

    @Test(arguments: [
        // allowed addresses, credentials?, source, digest answered?, verdict
        (["203.0.113.0/24"], false, "203.0.113.9", nil, SIPTrunkPolicy.Verdict.accept),
        (["203.0.113.0/24"], false, "198.51.100.1", nil, .refuse(reason: "address_not_allowed")),
        (["203.0.113.0/24"], true, "198.51.100.1", nil, .challenge),
        (["203.0.113.0/24"], true, "198.51.100.1", true, .accept),
        (["203.0.113.0/24"], true, "198.51.100.1", false, .refuse(reason: "authentication_failed")),
        ([], true, "203.0.113.9", nil, .challenge),
        ([], false, "127.0.0.1", nil, .refuse(reason: "not_configured")),
        (["2001:db8::/32"], false, "2001:db8::7", nil, .accept),
        (["2001:db8::/32"], false, "not an address", nil, .refuse(reason: "address_not_allowed")),
    ] as [([String], Bool, String, Bool?, SIPTrunkPolicy.Verdict)])
    func verdict(allowed: [String], withCredentials: Bool, source: String, digest: Bool?, expected: SIPTrunkPolicy.Verdict) throws {
        let policy = SIPTrunkPolicy(allowedAddresses: try allowed.map { try IPAddressRange($0) }, credentials: withCredentials ? Self.credentials : nil)
        #expect(policy.verdict(source: source, digest: digest) == expected)
    }
}
