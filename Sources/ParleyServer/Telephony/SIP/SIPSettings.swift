import Foundation
import ParleyNet
import ParleySIP

/// The SIP door's settings: where it listens and which trunks may call.
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
    /// How long a ringing call waits for the backend's decision before it is refused (480).
    public var decisionTimeout: Duration = .seconds(30)

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
        if let raw = value("PARLEY_SIP_WEBHOOK_URL") {
            if let url = URL(string: raw), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil { settings.webhookURL = url } else {
                problems.append("PARLEY_SIP_WEBHOOK_URL: \"\(raw)\" is not an http(s) URL")
            }
        }
        settings.webhookSecret = value("PARLEY_SIP_WEBHOOK_SECRET")
        if settings.webhookURL != nil, settings.webhookSecret == nil {
            problems.append("PARLEY_SIP_WEBHOOK_SECRET: set it with PARLEY_SIP_WEBHOOK_URL, so the backend can check that Parley sent each call event")
        }
        return settings
    }
}
