import Foundation
import ParleyCore
import Testing
@testable import ParleyCLI

/// `parley twilio` against a running server: the webhook URL and the setup checks.
@Suite("parley twilio")
struct TwilioCommandTests {
    @Test("prints the webhook URL and passes a complete setup")
    func completeSetup() async throws {
        let server = try CLITestServer.start()
        let created = await CommandRun.run(
            ["agents", "create", "-"], environment: server.environment,
            input: #"{"name": "Reception", "telephony": {"phone_numbers": ["+15005550006"]}}"#
        )
        let agentID = try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)
        var environment = server.environment
        environment["PARLEY_PUBLIC_URL"] = server.url + "/"
        environment["PARLEY_TWILIO_AUTH_TOKEN"] = "0123456789abcdef0123456789abcdef"
        let run = await CommandRun.run(["twilio"], environment: environment)
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output == """
            Paste this into Twilio's console (Phone Numbers → your number → Voice configuration →
            "A call comes in": Webhook, HTTP POST):

              \(server.url)/v1/telephony/twilio/voice

            note  public URL \(server.url) is not https: Twilio needs https and wss, so this only suits a local test
            ok    the server answers through the public URL (GET \(server.url)/healthz)
            ok    PARLEY_TWILIO_AUTH_TOKEN is set: every call's X-Twilio-Signature is verified
            ok    calls to +15005550006 reach \(agentID) (Reception)

            """)
        let forAgent = await CommandRun.run(["twilio", "--agent", agentID, "--public-url", "https://voice.example.com"], environment: environment)
        #expect(forAgent.output.contains("  https://voice.example.com/v1/telephony/twilio/voice?agent=\(agentID)\n"))
        #expect(forAgent.status == 1, "voice.example.com is not this server")
        await server.stop()
    }

    @Test("reports each missing piece and exits 1")
    func incompleteSetup() async throws {
        let server = try CLITestServer.start()
        let run = await CommandRun.run(["twilio", "--agent", "agent_nope"], environment: server.environment)
        #expect(run.status == 1)
        #expect(run.output.contains("  https://YOUR-PUBLIC-HOST/v1/telephony/twilio/voice?agent=agent_nope\n"))
        #expect(run.output.contains("FAIL  PARLEY_PUBLIC_URL is not set: set it to the https URL Twilio reaches this server at (a tunnel or reverse proxy), or pass --public-url\n"))
        #expect(run.output.contains("FAIL  PARLEY_TWILIO_AUTH_TOKEN is not set: the server refuses every call until it is"))
        #expect(run.output.contains("FAIL  there is no agent agent_nope (see 'parley agents list')\n"))
        #expect(run.errorOutput == "error: the phone setup has 3 problems\n")
        await server.stop()
    }
}
