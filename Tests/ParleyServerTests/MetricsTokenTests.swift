import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import Testing

/// `GET /metrics` over real HTTP: open without `PARLEY_METRICS_TOKEN`; with it, only that token
/// or the server secret reads it, everything else gets 401, and the token is never logged.
@Suite("Metrics token")
struct MetricsTokenTests {
    static let token = "scrape-token-0123456789abcdef"

    /// `GET /metrics` with `Authorization` set to `authorization` (none when `nil`).
    static func metrics(_ server: TestServer, authorization: String?) async throws -> HTTPClient.Response {
        try await HTTPClient.shared.send(HTTPClient.Request(
            url: server.baseURL.appendingPathComponent("/metrics"), headers: authorization.map { ["Authorization": $0] } ?? [:]
        ))
    }

    @Test("without PARLEY_METRICS_TOKEN, /metrics is open")
    func openWithoutAToken() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let response = try await Self.metrics(server, authorization: nil)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("# TYPE parley_active_sessions gauge"))
    }

    @Test("with PARLEY_METRICS_TOKEN, no or a wrong credential gets 401; the token or the server secret gets the metrics")
    func tokenRequired() async throws {
        let logged = LoggedEvents()
        let server = try TestServer.start(log: logged.log) { $0.metricsToken = Self.token }
        defer { Task { await server.stop() } }

        let refusedAuthorizations: [String?] = [
            nil, "Bearer", "Bearer wrong-token-0123456789abcdef", "Bearer \(Self.token)x", "Bearer \(Self.token.dropLast())",
            "Basic \(Self.token)", "Bearer \(server.clientToken())",
        ]
        for authorization in refusedAuthorizations {
            let response = try await Self.metrics(server, authorization: authorization)
            #expect(response.status == 401, "\(authorization ?? "no Authorization")")
            #expect(response.headers["www-authenticate"] == #"Bearer realm="metrics""#)
            let body = try JSONDecoder().decode(JSONValue.self, from: response.body)
            #expect(body["error"]?["code"]?.stringValue == "unauthorized")
            #expect(body["error"]?["message"]?.stringValue == "/metrics needs 'Authorization: Bearer <PARLEY_METRICS_TOKEN>' (or the server secret).")
        }

        for credential in [Self.token, server.secret] {
            let response = try await Self.metrics(server, authorization: "Bearer \(credential)")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        }
        let text = String(decoding: try await Self.metrics(server, authorization: "bearer \(Self.token)").body, as: UTF8.self)
        #expect(text.contains(#"parley_door_refusals_total{door="metrics",reason="missing_token"} 3"#), "\(text)")
        #expect(text.contains(#"parley_door_refusals_total{door="metrics",reason="wrong_token"} 4"#), "\(text)")
        #expect(!text.contains(Self.token))
        #expect(!logged.texts.contains { $0.contains(Self.token) }, "the metrics token reached the log")
    }
}
