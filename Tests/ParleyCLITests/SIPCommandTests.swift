import Foundation
import ParleyCore
import Testing
@testable import ParleyCLI

/// `parley sip` against a running server: the SIP door's settings and who answers which number.
@Suite("parley sip")
struct SIPCommandTests {
    @Test("prints the URI trunks call and passes a complete setup")
    func completeSetup() async throws {
        let server = try CLITestServer.start()
        let created = await CommandRun.run(
            ["agents", "create", "-"], environment: server.environment,
            input: #"{"name": "Reception", "telephony": {"phone_numbers": ["+15005550006"]}}"#
        )
        let agentID = try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)
        var environment = server.environment
        environment["PARLEY_HOST"] = "192.0.2.10"
        environment["PARLEY_SIP_PORT"] = "5060"
        environment["PARLEY_SIP_TRUNKS"] = "192.0.2.20, 198.51.100.0/24"
        let run = await CommandRun.run(["sip"], environment: environment)
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output == """
            Point the trunk or PBX at (the number the agent answers in place of NUMBER):

              sip:NUMBER@192.0.2.10:5060

            ok    the SIP door listens on UDP and TCP 192.0.2.10:5060
            ok    calls from 192.0.2.20/32, 198.51.100.0/24 are taken without a challenge
            ok    calls to +15005550006 reach \(agentID) (Reception)

            """)
        await server.stop()
    }

    @Test("reports a closed door and no trunks, and exits 1")
    func closedDoor() async throws {
        let server = try CLITestServer.start()
        var environment = server.environment
        environment["PARLEY_SIP_USERNAME"] = "trunk"
        let run = await CommandRun.run(["sip"], environment: environment)
        #expect(run.status == 1)
        #expect(run.output.contains("FAIL  PARLEY_SIP_PORT is not set: the SIP door is closed (5060 is the usual port)\n"))
        #expect(run.output.contains("FAIL  PARLEY_SIP_USERNAME and PARLEY_SIP_PASSWORD: set both for digest authentication, or neither\n"))
        #expect(run.output.contains("FAIL  neither PARLEY_SIP_TRUNKS nor PARLEY_SIP_USERNAME and PARLEY_SIP_PASSWORD is set: every call is refused\n"))
        #expect(run.errorOutput == "error: the phone setup has 3 problems\n")
        await server.stop()
    }

    @Test("names the outbound trunk, and refuses a caller id that cannot go in From")
    func outboundTrunk() async throws {
        let server = try CLITestServer.start()
        var environment = server.environment
        environment["PARLEY_SIP_PORT"] = "5060"
        environment["PARLEY_SIP_TRUNKS"] = "192.0.2.20"
        environment["PARLEY_SIP_OUTBOUND_TRUNK"] = "sip:203.0.113.5:5060;transport=tcp"
        environment["PARLEY_SIP_CALLER_ID"] = "+14155550100"
        let run = await CommandRun.run(["sip"], environment: environment)
        #expect(run.output.contains("ok    calls placed with POST /v1/calls go out through sip:203.0.113.5:5060;transport=tcp as +14155550100\n"), "\(run.output)")
        environment["PARLEY_SIP_CALLER_ID"] = "<sip:evil>"
        let refused = await CommandRun.run(["sip"], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.output.contains(
            "FAIL  PARLEY_SIP_CALLER_ID: \"<sip:evil>\" is not an E.164 number or a plain SIP user name (letters, digits, . _ - +)\n"
        ), "\(refused.output)")
        await server.stop()
    }
}
