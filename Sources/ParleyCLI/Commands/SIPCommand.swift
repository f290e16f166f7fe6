import Foundation
import ParleyServer

/// `parley sip`: checks the SIP door's settings (and the outbound trunk's, when set) and prints
/// the URI a trunk or PBX sends calls to.
struct SIPCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "sip",
        abstract: "Check the SIP door's setup and print the URI trunks call.",
        discussion: "Checks that PARLEY_SIP_PORT opens the SIP door, that trunks may call it (PARLEY_SIP_TRUNKS, or "
            + "PARLEY_SIP_USERNAME and PARLEY_SIP_PASSWORD for digest authentication) and which agent answers each phone number. "
            + "Exits 1 when a check fails.",
        options: [AgentsCommands.urlOption],
        environment: [
            EnvironmentSpec("PARLEY_SIP_PORT", "The SIP port, UDP and TCP."),
            EnvironmentSpec("PARLEY_SIP_TRUNKS", "Addresses or CIDR blocks of trunks taken without a challenge."),
            EnvironmentSpec("PARLEY_SIP_USERNAME", "The digest username of trunks calling from elsewhere."),
            EnvironmentSpec("PARLEY_SIP_PASSWORD", "Its password."),
        ] + AgentsCommands.environment,
        examples: ["parley sip", "PARLEY_SIP_PORT=5060 PARLEY_SIP_TRUNKS=192.0.2.20 parley sip"],
        command: SIPCommand.self
    )

    /// The server, when given as an option.
    var url: URL?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        url = try arguments.value("url", .serverURL)
    }

    func run(_ context: CommandContext) async throws {
        typealias Finding = TwilioCommand.Finding
        var findings: [Finding] = []
        let (settings, settingProblems) = ServerSettings.load(environment: context.environment)
        findings += settingProblems.filter { $0.hasPrefix("PARLEY_SIP_") }.map(Finding.problem)
        let sip = settings.sip
        if let port = sip.port {
            let host = sip.mediaAddress ?? settings.host
            context.output.line("Point the trunk or PBX at (the number the agent answers in place of NUMBER):")
            context.output.line("")
            context.output.line("  " + context.outputStyle.bold("sip:NUMBER@\(host):\(port)"))
            context.output.line("")
            findings.append(.ok("the SIP door listens on UDP and TCP \(settings.host):\(port)"))
            if ["127.0.0.1", "::1", "localhost"].contains(settings.host) {
                findings.append(.note("PARLEY_HOST is loopback: only this machine can call; set it to an address trunks reach"))
            }
        } else {
            findings.append(.problem("PARLEY_SIP_PORT is not set: the SIP door is closed (5060 is the usual port)"))
        }
        if !sip.trunks.isEmpty {
            findings.append(.ok("calls from \(sip.trunks.map(\.description).joined(separator: ", ")) are taken without a challenge"))
        }
        if sip.credentials != nil {
            findings.append(.ok("calls from elsewhere must pass digest authentication as PARLEY_SIP_USERNAME"))
        }
        if let trunk = sip.outboundTrunk {
            findings.append(.ok("calls placed with POST /v1/calls go out through \(trunk) as \(sip.callerID)"))
        }
        if sip.trunks.isEmpty, sip.credentials == nil {
            findings.append(.problem("neither PARLEY_SIP_TRUNKS nor PARLEY_SIP_USERNAME and PARLEY_SIP_PASSWORD is set: every call is refused"))
        }
        findings += await TwilioCommand.agentFindings(url: url, agentID: nil, context: context)
        try TwilioCommand.report(findings, context: context)
    }
}
