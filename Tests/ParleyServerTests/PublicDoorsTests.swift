import Foundation
import ParleyServer
import Testing

/// The doors `parley serve` lists at start, as exact text, for the settings that open or close them.
@Suite struct PublicDoorsTests {
    @Test func theDefaultsOnLoopback() {
        #expect(PublicDoors.lines(for: ServerSettings()) == [
            "realtime WebSocket  /v1/realtime                   client token or server secret",
            "WebRTC calls        /v1/realtime/calls             client token or server secret; audio on a free UDP port",
            "Twilio phone calls  /v1/telephony/twilio/*         closed: PARLEY_TWILIO_AUTH_TOKEN is not set",
            "local tokens        /v1/local/token                callers on this machine, without a credential",
            "REST API            /v1/agents, /v1/tokens, …      server secret",
            "metrics             /metrics                       open to anyone (set PARLEY_METRICS_TOKEN to require a token)",
            "health and status   /healthz, /readyz, /v1/status  open to anyone",
            "client MCP servers  session.tools                  off: only the server secret and agents name MCP servers",
        ])
    }

    @Test func aPublicServerWithPhoneCallsAMetricsTokenAndClientMCPServers() {
        var settings = ServerSettings()
        settings.host = "0.0.0.0"
        settings.webRTCPort = 40_000
        settings.telephony.twilioAuthToken = "twilio-auth-token-0123456789abcdef"
        settings.metricsToken = "scrape-token-0123456789abcdef"
        settings.serverSecret = "server-secret-0123456789abcdef"
        settings.clientsNameMCPServers = true
        let lines = PublicDoors.lines(for: settings)
        #expect(lines == [
            "realtime WebSocket  /v1/realtime                   client token or server secret",
            "WebRTC calls        /v1/realtime/calls             client token or server secret; audio on UDP port 40000",
            "Twilio phone calls  /v1/telephony/twilio/*         calls signed with PARLEY_TWILIO_AUTH_TOKEN",
            "local tokens        /v1/local/token                closed: the server listens beyond loopback",
            "REST API            /v1/agents, /v1/tokens, …      server secret",
            "metrics             /metrics                       PARLEY_METRICS_TOKEN or server secret",
            "health and status   /healthz, /readyz, /v1/status  open to anyone",
            "client MCP servers  session.tools                  on: any token holder makes the server call URLs they name",
        ])
        for secret in [settings.telephony.twilioAuthToken, settings.metricsToken, settings.serverSecret].compactMap({ $0 }) {
            #expect(!lines.joined().contains(secret), "a secret is printed")
        }
    }

    @Test func localTokensCloseWithAPublicURLOrWhenTurnedOff() {
        var proxied = ServerSettings()
        proxied.telephony.publicURL = URL(string: "https://voice.example.com")
        #expect(PublicDoors.lines(for: proxied)[3] == "local tokens        /v1/local/token                closed: PARLEY_PUBLIC_URL is set")
        var turnedOff = ServerSettings()
        turnedOff.allowsLocalTokens = false
        #expect(PublicDoors.lines(for: turnedOff)[3] == "local tokens        /v1/local/token                closed: PARLEY_LOCAL_TOKENS is false")
    }
}
