import Foundation

/// The doors a server with given settings opens to whoever reaches its port, and who may come
/// in through each: what `parley serve` prints at start, so an operator sees at a glance what is
/// reachable. Names settings, never their values.
///
/// ```swift
/// for line in PublicDoors.lines(for: settings) { print("  " + line) }
/// // realtime WebSocket  /v1/realtime             client token or server secret
/// // …
/// ```
public enum PublicDoors {
    /// One line per door: its name, its paths and who may come in (or why it is closed).
    public static func lines(for settings: ServerSettings) -> [String] {
        let doors: [(name: String, paths: String, access: String)] = [
            ("realtime WebSocket", "/v1/realtime", "client token or server secret"),
            ("WebRTC calls", "/v1/realtime/calls", "client token or server secret; audio on "
                + (settings.webRTCPort == 0 ? "a free UDP port" : "UDP port \(settings.webRTCPort)")),
            ("Twilio phone calls", "/v1/telephony/twilio/*", settings.telephony.twilioAuthToken == nil
                ? "closed: PARLEY_TWILIO_AUTH_TOKEN is not set" : "calls signed with PARLEY_TWILIO_AUTH_TOKEN"),
            ("local tokens", "/v1/local/token", localTokens(settings)),
            ("REST API", "/v1/agents, /v1/tokens, …", "server secret"),
            ("metrics", "/metrics", settings.metricsToken == nil
                ? "open to anyone (set PARLEY_METRICS_TOKEN to require a token)" : "PARLEY_METRICS_TOKEN or server secret"),
            ("health and status", "/healthz, /readyz, /v1/status", "open to anyone"),
            ("client MCP servers", "session.tools", settings.clientsNameMCPServers
                ? "on: any token holder makes the server call URLs they name" : "off: only the server secret and agents name MCP servers"),
        ]
        let nameWidth = doors.map(\.name.count).max() ?? 0
        let pathsWidth = doors.map(\.paths.count).max() ?? 0
        return doors.map { door in
            door.name.padding(toLength: nameWidth + 2, withPad: " ", startingAt: 0)
                + door.paths.padding(toLength: pathsWidth + 2, withPad: " ", startingAt: 0) + door.access
        }
    }

    /// Who may get a local token, by the first condition of `LocalCallerCheck` the settings fail.
    private static func localTokens(_ settings: ServerSettings) -> String {
        if !settings.isLoopback { return "closed: the server listens beyond loopback" }
        if settings.allowsLocalTokens == false { return "closed: PARLEY_LOCAL_TOKENS is false" }
        if settings.telephony.publicURL != nil { return "closed: PARLEY_PUBLIC_URL is set" }
        return "callers on this machine, without a credential"
    }
}
