import Foundation
import ParleyCore
import ParleyServer
import Testing

/// `POST /v1/local/token` answers only the person at this machine: hostile requests against a
/// real server on loopback, as they arrive through a tunnel, a proxy or another page.
@Suite("Security: local tokens only for the local user")
struct SecurityLocalTokenTests {
    /// Posts to the local token route with exactly `headers` (Host first), from 127.0.0.1.
    static func requestLocalToken(_ server: TestServer, host: String, _ headers: [(String, String)] = []) async throws -> (status: Int, text: String) {
        let connection = try await RawConnection.connect(port: server.port)
        var request = "POST /v1/local/token HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\nContent-Length: 0\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        await connection.send(request + "\r\n")
        return await connection.readResponse() ?? (0, "")
    }

    @Test("the server's own page on loopback gets a token; a foreign Host, a foreign Origin and proxy headers do not")
    func onlyTheLocalPageGetsATokenAndProxiedRequestsDoNot() async throws {
        let server = try TestServer.start()
        let own = "127.0.0.1:\(server.port)"
        let accepted: [(String, [(String, String)])] = [
            (own, []),
            (own, [("Origin", "http://\(own)")]),
            ("localhost:\(server.port)", [("Origin", "http://localhost:\(server.port)")]),
        ]
        for (host, headers) in accepted {
            let answer = try await Self.requestLocalToken(server, host: host, headers)
            #expect(answer.status == 200, "\(host) \(headers): \(answer.text)")
        }
        let refused: [(String, [(String, String)], String)] = [
            ("parley.example.com", [], "Host is not one"),  // a tunnel or DNS rebinding
            ("attacker.example:\(server.port)", [("Origin", "http://attacker.example:\(server.port)")], "Host is not one"),
            (own, [("Origin", "http://attacker.example")], "is another"),
            (own, [("Origin", "http://127.0.0.1:3000")], "is another"),  // another local page
            (own, [("Origin", "null")], "is another"),
            (own, [("X-Forwarded-For", "203.0.113.9")], "through a proxy"),
            (own, [("X-Forwarded-Host", "parley.example.com")], "through a proxy"),
            (own, [("X-Forwarded-Proto", "https")], "through a proxy"),
            (own, [("Forwarded", "for=203.0.113.9;proto=https")], "through a proxy"),
            (own, [("X-Real-IP", "203.0.113.9")], "through a proxy"),
        ]
        for (host, headers, reason) in refused {
            let answer = try await Self.requestLocalToken(server, host: host, headers)
            #expect(answer.status == 403, "\(host) \(headers) was given a token")
            #expect(answer.text.contains("local_tokens_disabled") && answer.text.contains(reason), "\(host) \(headers): \(answer.text)")
            #expect(!answer.text.contains("\"value\""), "\(host) \(headers): a token in the refusal")
        }
        #expect(server.app.context.metrics.prometheusText().contains(#"parley_door_refusals_total{door="local_token",reason="proxied"} 5"#))
        await server.stop()
    }

    @Test("with PARLEY_PUBLIC_URL set, or the endpoint turned off, nobody gets a local token")
    func aPublicURLOrTheSwitchTurnsLocalTokensOff() async throws {
        let published = try TestServer.start { $0.telephony.publicURL = URL(string: "https://parley.example.com") }
        let answer = try await Self.requestLocalToken(published, host: "127.0.0.1:\(published.port)")
        #expect(answer.status == 403 && answer.text.contains("PARLEY_PUBLIC_URL"), "\(answer.text)")
        await published.stop()
        let off = try TestServer.start { $0.allowsLocalTokens = false }
        #expect(try await Self.requestLocalToken(off, host: "127.0.0.1:\(off.port)").status == 403)
        await off.stop()
    }

    @Test("a server listening beyond loopback never gives local tokens, even when asked to")
    func beyondLoopbackLocalTokensStayOff() {
        var settings = ServerSettings()
        settings.host = "0.0.0.0"
        settings.allowsLocalTokens = true
        #expect(!settings.localTokensEnabled)
    }
}
