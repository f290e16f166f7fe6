import Foundation
import ParleyNet
import ParleySIP

/// The SIP door's settings: where it listens, which trunks may call, and the trunk calls Parley
/// places go through.
public struct SIPSettings: Sendable {
    /// The SIP port, UDP and TCP (`PARLEY_SIP_PORT`); `nil` keeps the door closed, 0 picks a free port.
    public var port: Int?
    /// Networks trunks call from (`PARLEY_SIP_TRUNKS`, CIDR blocks or addresses, comma-separated).
    public var trunks: [IPAddressRange] = []
    /// The digest credentials of trunks calling from elsewhere (`PARLEY_SIP_USERNAME`, `PARLEY_SIP_PASSWORD`).
    public var credentials: SIPTrunkPolicy.Credentials?
    /// The address SDP answers give for audio (`PARLEY_SIP_MEDIA_ADDRESS`), when not the one each INVITE arrived on.
    public var mediaAddress: String?
    /// The UDP ports RTP binds in (`PARLEY_SIP_RTP_PORTS`, `10000-20000` by default).
    public var rtpPorts: ClosedRange<UInt16> = 10_000...20_000
    /// Where a ringing call is announced (`PARLEY_SIP_WEBHOOK_URL`): the backend then accepts or
    /// rejects it; without it, calls are answered by the agent of the called number.
    public var webhookURL: URL?
    /// The secret the webhook is signed with (`PARLEY_SIP_WEBHOOK_SECRET`, `whsec_…` as OpenAI's).
    public var webhookSecret: String?
    /// New calls a second each source address may start, a burst of twice as many
    /// (`PARLEY_SIP_INVITES_PER_SECOND`); more are refused with `503` and `Retry-After`.
    public var invitesPerSecond = 20
    /// How long a ringing call waits for the backend's decision before it is refused (480).
    public var decisionTimeout: Duration = .seconds(30)
    /// The trunk calls Parley places go through (`PARLEY_SIP_OUTBOUND_TRUNK`, a SIP URI such as
    /// `sip:sip.example.com;transport=tcp`); `nil`: `POST /v1/calls` is refused.
    public var outboundTrunk: String?
    /// The digest credentials the outbound trunk is answered with when it challenges
    /// (`PARLEY_SIP_OUTBOUND_USERNAME`, `PARLEY_SIP_OUTBOUND_PASSWORD`).
    public var outboundCredentials: (username: String, password: String)?
    /// Who placed calls come from, the user part of `From` (`PARLEY_SIP_CALLER_ID`, usually an E.164 number).
    public var callerID = "parley"

    /// The door closed.
    public init() {}

    /// Who may call.
    public var policy: SIPTrunkPolicy { SIPTrunkPolicy(allowedAddresses: trunks, credentials: credentials) }

    /// Reads the `PARLEY_SIP_*` variables through `value`.
    static func load(_ value: (String) -> String?, problems: inout [String]) -> SIPSettings {
        var settings = SIPSettings()
        if let raw = value("PARLEY_SIP_PORT") {
            if let port = Int(raw), (0...65_535).contains(port) { settings.port = port } else {
                problems.append("PARLEY_SIP_PORT: \"\(raw)\" is not a port from 0 to 65535")
            }
        }
        for block in (value("PARLEY_SIP_TRUNKS") ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !block.isEmpty {
            do {
                settings.trunks.append(try IPAddressRange(block))
            } catch {
                problems.append("PARLEY_SIP_TRUNKS: \(error)")
            }
        }
        switch (value("PARLEY_SIP_USERNAME"), value("PARLEY_SIP_PASSWORD")) {
        case (let username?, let password?): settings.credentials = .init(username: username, password: password)
        case (nil, nil): break
        default: problems.append("PARLEY_SIP_USERNAME and PARLEY_SIP_PASSWORD: set both for digest authentication, or neither")
        }
        if let address = value("PARLEY_SIP_MEDIA_ADDRESS") {
            if IPAddress(address) != nil { settings.mediaAddress = address } else {
                problems.append("PARLEY_SIP_MEDIA_ADDRESS: \"\(address)\" is not an IP address")
            }
        }
        if let raw = value("PARLEY_SIP_RTP_PORTS") {
            let bounds = raw.split(separator: "-").compactMap { UInt16($0.trimmingCharacters(in: .whitespaces)) }
            if bounds.count == 2, bounds[0] > 0, bounds[0] < bounds[1] { settings.rtpPorts = bounds[0]...bounds[1] } else {
                problems.append("PARLEY_SIP_RTP_PORTS: \"\(raw)\" is not a port range such as 10000-20000")
            }
        }
        if let raw = value("PARLEY_SIP_INVITES_PER_SECOND") {
            if let rate = Int(raw), (1...10_000).contains(rate) { settings.invitesPerSecond = rate } else {
                problems.append("PARLEY_SIP_INVITES_PER_SECOND: \"\(raw)\" is not a whole number from 1 to 10000")
            }
        }
        if let raw = value("PARLEY_SIP_WEBHOOK_URL") {
            if let url = URL(string: raw), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil { settings.webhookURL = url } else {
                problems.append("PARLEY_SIP_WEBHOOK_URL: \"\(raw)\" is not an http(s) URL")
            }
        }
        settings.webhookSecret = value("PARLEY_SIP_WEBHOOK_SECRET")
        if settings.webhookURL != nil, settings.webhookSecret == nil {
            problems.append("PARLEY_SIP_WEBHOOK_SECRET: set it with PARLEY_SIP_WEBHOOK_URL, so the backend can check that Parley sent each call event")
        }
        loadOutbound(value, into: &settings, problems: &problems)
        return settings
    }

    /// Reads the settings of calls Parley places.
    private static func loadOutbound(_ value: (String) -> String?, into settings: inout SIPSettings, problems: inout [String]) {
        if let trunk = value("PARLEY_SIP_OUTBOUND_TRUNK") {
            if isTrunkURI(trunk) { settings.outboundTrunk = trunk } else {
                problems.append("PARLEY_SIP_OUTBOUND_TRUNK: \"\(trunk)\" is not a SIP URI such as sip:sip.example.com or sip:203.0.113.5:5060;transport=tcp")
            }
        }
        switch (value("PARLEY_SIP_OUTBOUND_USERNAME"), value("PARLEY_SIP_OUTBOUND_PASSWORD")) {
        case (let username?, let password?): settings.outboundCredentials = (username, password)
        case (nil, nil): break
        default: problems.append("PARLEY_SIP_OUTBOUND_USERNAME and PARLEY_SIP_OUTBOUND_PASSWORD: set both for a trunk that asks for digest authentication, or neither")
        }
        if let callerID = value("PARLEY_SIP_CALLER_ID") {
            if isCallerID(callerID) { settings.callerID = callerID } else {
                problems.append("PARLEY_SIP_CALLER_ID: \"\(callerID)\" is not an E.164 number or a plain SIP user name (letters, digits, . _ - +)")
            }
        }
    }

    /// Whether `uri` is a `sip:`/`sips:` URI that can go in a header: printable ASCII, no quotes or brackets.
    static func isTrunkURI(_ uri: String) -> Bool {
        let lowered = uri.lowercased()
        guard lowered.hasPrefix("sip:") || lowered.hasPrefix("sips:"), uri.count <= 256, !uri.hasSuffix(":") else { return false }
        return uri.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && !"<>\"".unicodeScalars.contains($0) }
    }

    /// Whether `user` can be the user part of `From`: 1 to 64 letters, digits and `. _ - +`.
    static func isCallerID(_ user: String) -> Bool {
        (1...64).contains(user.count) && user.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-+".unicodeScalars.contains($0)) }
    }
}
