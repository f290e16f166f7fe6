import Foundation
import ParleyCore
import Testing
@testable import ParleyServer

/// Credentials at the real endpoints: algorithm confusion, signature tricks, near-miss server
/// secrets, scope across agents and instances, and client tokens on backend routes. (Token
/// minting and verification as such are covered by `ClientTokenTests`.)
@Suite("Security: client tokens and the server secret")
struct SecurityTokenTests {
    /// A JWT with `header` and `claims`, signed with HMAC-SHA256 under `secret` whatever `alg` says.
    static func token(header: String, claims: String, secret: String) -> String {
        let signingInput = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        let signature = HMACSHA256.authenticationCode(for: Data(signingInput.utf8), key: Data(secret.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    static var validClaims: String {
        let now = Int(Date().timeIntervalSince1970)
        return #"{"sub":"mallory","exp":\#(now + 600),"iat":\#(now),"jti":"confused"}"#
    }

    @Test("a token is refused whatever algorithm it claims, unless it is exactly HS256", arguments: [
        "none", "None", "NONE", "nOnE", "", "hs256", "HS256 ", "HS384", "HS512", "RS256", "ES256", "PS256", "EdDSA",
    ])
    func algorithmConfusionIsRefused(algorithm: String) async throws {
        let server = try TestServer.start()
        let signed = Self.token(header: #"{"alg":"\#(algorithm)","typ":"JWT"}"#, claims: Self.validClaims, secret: server.secret)
        let unsigned = signed.split(separator: ".").prefix(2).joined(separator: ".") + "."
        for token in [signed, unsigned] {
            await #expect(throws: (any Error).self, "alg \(algorithm.debugDescription) opened a realtime session") {
                _ = try await RealtimeTestClient.connect(server, token: token)
            }
        }
        // The same claims under HS256 are accepted: the refusal above is about the algorithm alone.
        let genuine = Self.token(header: #"{"alg":"HS256","typ":"JWT"}"#, claims: Self.validClaims, secret: server.secret)
        let client = try await RealtimeTestClient.connect(server, token: genuine)
        #expect(await client.next("session.created") != nil)
        await server.stop()
    }

    @Test("signature tricks are refused: missing, truncated, empty-key, header-swapped")
    func signatureTricksAreRefused() async throws {
        let server = try TestServer.start()
        let genuine = server.clientToken()
        let parts = genuine.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let signature = try #require(Base64URL.decode(Substring(parts[2])))
        let otherHeader = Base64URL.encode(Data(#"{"typ":"JWT","alg":"HS256"}"#.utf8))
        let forgeries = [
            "\(parts[0]).\(parts[1]).",
            "\(parts[0]).\(parts[1]).\(Base64URL.encode(signature.prefix(16)))",
            "\(parts[0]).\(parts[1]).\(Base64URL.encode(signature + Data([0])))",
            Self.token(header: #"{"alg":"HS256","typ":"JWT"}"#, claims: Self.validClaims, secret: ""),
            "\(otherHeader).\(parts[1]).\(parts[2])",
            "\(parts[0]).\(parts[1])",
            genuine + ".",
            genuine + "AA",
            "\(parts[0]).\(parts[1]).\(Self.withPaddingBitsFlipped(parts[2]))",
        ]
        for (index, forged) in forgeries.enumerated() {
            await #expect(throws: (any Error).self, "forgery \(index) opened a realtime session") {
                _ = try await RealtimeTestClient.connect(server, token: forged)
            }
        }
        let client = try await RealtimeTestClient.connect(server, token: genuine)
        #expect(await client.next("session.created") != nil)
        await server.stop()
    }

    @Test("compact browser tokens: forged tags, edited payloads, expired and unknown kinds are refused")
    func compactTokenForgeriesAreRefused() async throws {
        let server = try TestServer.start()
        let minted = try await server.request("POST", "/v1/realtime/client_secrets", json: "{}")
        let genuine = try #require(minted.body["value"]?.stringValue)
        #expect(genuine.hasPrefix("pk_"), "client secrets are compact tokens")
        let parts = genuine.dropFirst(3).split(separator: ".").map(String.init)
        let payload = try #require(Base64URL.decode(Substring(parts[0])))
        let tag = try #require(Base64URL.decode(Substring(parts[1])))
        func token(_ payload: Data, _ tag: Data) -> String { "pk_" + Base64URL.encode(payload) + "." + Base64URL.encode(tag) }
        func edited(_ index: Int, _ value: UInt8) -> Data {
            var copy = payload
            copy[copy.startIndex + index] = value
            return copy
        }
        let key = Data(server.secret.utf8)
        let forgeries = [
            token(payload, Data(tag.reversed())),
            token(payload, tag.prefix(8)),
            token(payload, Data()),
            token(edited(2, 0xFF), tag),  // a later expiry under the old tag
            token(edited(1, 1), tag),  // client → local user under the old tag
            "pk_" + parts[0] + "." + Self.withPaddingBitsFlipped(parts[1]),
            CompactClientToken.mint(kind: .client, expiresAt: Int(Date().timeIntervalSince1970) - 1, key: key),
            CompactClientToken.mint(kind: .client, expiresAt: Int(Date().timeIntervalSince1970) + 600, key: Data("another-secret-entirely".utf8)),
            "pk_" + parts[0],
            genuine + ".x",
        ]
        for (index, forged) in forgeries.enumerated() {
            await #expect(throws: (any Error).self, "compact forgery \(index) opened a realtime session") {
                _ = try await RealtimeTestClient.connect(server, token: forged)
            }
        }
        let client = try await RealtimeTestClient.connect(server, token: genuine)
        #expect(await client.next("session.created") != nil)
        await server.stop()
    }

    /// The same base64url text with the unused low bits of its last character set: a lenient
    /// decoder reads the same bytes, so a verifier using one would accept a second spelling.
    static func withPaddingBitsFlipped(_ text: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard let last = text.last, let value = alphabet.firstIndex(of: last) else { return text }
        let unusedBits = [0: 0, 2: 0b1111, 3: 0b11][text.count % 4] ?? 0
        return String(text.dropLast()) + String(alphabet[value | unusedBits == value ? value ^ unusedBits : value | unusedBits])
    }

    @Test("only the exact server secret is the server secret")
    func nearMissSecretsAreRefused() async throws {
        let server = try TestServer.start()
        let secret = server.secret
        let nearMisses = [
            String(secret.dropLast()), secret + "x", secret.uppercased(), " " + secret + "x", String(secret.prefix(8)),
            Base64URL.encode(Data(secret.utf8)), secret.replacingOccurrences(of: "0", with: "O"),
        ]
        for attempt in nearMisses {
            #expect(try await server.request("GET", "/v1/agents", token: .some(attempt)).status == 401, "\(attempt)")
        }
        let basic = try await HTTPRequestSender.send(server, "GET", "/v1/agents", headers: ["Authorization": "Basic \(secret)"])
        #expect(basic.status == 401)
        let query = try await HTTPRequestSender.send(server, "GET", "/v1/agents?api_key=\(secret)", headers: [:])
        #expect(query.status == 401)
        #expect(try await server.request("GET", "/v1/agents").status == 200)
        await server.stop()
    }

    @Test("a client token cannot use any backend route", arguments: [
        ("POST", "/v1/tokens", #"{"user":"mallory"}"#), ("POST", "/v1/realtime/client_secrets", "{}"),
        ("POST", "/v1/agents", #"{"name":"Evil"}"#), ("GET", "/v1/agents/AGENT", ""), ("PATCH", "/v1/agents/AGENT", #"{"name":"Evil"}"#),
        ("DELETE", "/v1/agents/AGENT", ""), ("POST", "/v1/agents/AGENT/instances", #"{"user":"mallory"}"#),
        ("GET", "/v1/instances/INSTANCE", ""), ("POST", "/v1/instances/INSTANCE/interrupt", ""),
        ("DELETE", "/v1/instances/INSTANCE", ""), ("GET", "/v1/conversations/CONVERSATION/items", ""),
    ])
    func clientTokensStayOffBackendRoutes(method: String, path: String, body: String) async throws {
        let server = try TestServer.start()
        let agent = try await server.request("POST", "/v1/agents", json: #"{"name":"Owned"}"#)
        let agentID = try #require(agent.body["id"]?.stringValue)
        let instance = try await server.request("POST", "/v1/agents/\(agentID)/instances", json: #"{"user":"alice"}"#)
        let instanceID = try #require(instance.body["id"]?.stringValue)
        let conversationID = try #require(instance.body["conversation_id"]?.stringValue)
        let instanceToken = try #require(instance.body["client_secret"]?["value"]?.stringValue)
        let resolved = path.replacingOccurrences(of: "AGENT", with: agentID).replacingOccurrences(of: "INSTANCE", with: instanceID)
            .replacingOccurrences(of: "CONVERSATION", with: conversationID)
        for token in [server.clientToken(user: "mallory"), server.clientToken(user: "alice", agentID: agentID, instanceID: instanceID), instanceToken] {
            let refused = try await server.request(method, resolved, json: body.isEmpty ? nil : body, token: .some(token))
            #expect(refused.status == 403, "\(method) \(resolved) answered \(refused.status) to a client token")
        }
        #expect(try await server.request("GET", "/v1/agents/\(agentID)").body["name"]?.stringValue == "Owned")
        #expect(try await server.request("GET", "/v1/instances/\(instanceID)").body["status"]?.stringValue != "ended")
        await server.stop()
    }

    @Test("an instance's token opens only that instance")
    func instanceScopeHoldsAtTheRealtimeEndpoint() async throws {
        let server = try TestServer.start()
        let agentA = try #require(try await server.request("POST", "/v1/agents", json: #"{"name":"A"}"#).body["id"]?.stringValue)
        let agentB = try #require(try await server.request("POST", "/v1/agents", json: #"{"name":"B"}"#).body["id"]?.stringValue)
        let instanceA = try await server.request("POST", "/v1/agents/\(agentA)/instances", json: #"{"user":"alice"}"#)
        let instanceB = try await server.request("POST", "/v1/agents/\(agentB)/instances", json: #"{"user":"bob"}"#)
        let idA = try #require(instanceA.body["id"]?.stringValue)
        let idB = try #require(instanceB.body["id"]?.stringValue)
        let tokenA = try #require(instanceA.body["client_secret"]?["value"]?.stringValue)
        let agentAToken = server.clientToken(user: "alice", agentID: agentA)
        let refusals: [(token: String, query: String)] = [
            (tokenA, "?instance=\(idB)"), (tokenA, "?agent=\(agentA)"), (tokenA, "?agent=\(agentB)"),
            (agentAToken, "?instance=\(idB)"), (agentAToken, "?agent=\(agentB)"), (agentAToken, ""),
            (tokenA, "?instance=\(idA)x"), (tokenA, "?instance=\(idA)&instance=\(idB)"),
        ]
        for (token, query) in refusals {
            // Refused before the upgrade, or (an agent's token joining another agent's instance,
            // which takes the store to tell) with an error and the socket closed before any session.
            guard let opened = try? await RealtimeTestClient.connect(server, token: token, query: query) else { continue }
            let error = await opened.next("error", seconds: 10)
            #expect(error?["error"]?["code"]?.stringValue == "session_setup_failed", "\(token == tokenA ? "instance" : "agent") token opened \(query)")
            #expect(await opened.closes(within: 10), "\(query): the refused socket stays open")
            #expect(await !opened.events.contains { $0["type"]?.stringValue == "session.created" }, "\(query): a session started")
        }
        let own = try await RealtimeTestClient.connect(server, token: tokenA, query: "?instance=\(idA)")
        #expect(await own.next("session.created") != nil)
        own.socket.close(code: 1000, reason: "done")
        // A token minted for an instance needs no query to join it.
        let unnamed = try await RealtimeTestClient.connect(server, token: tokenA)
        let conversation = await unnamed.next("conversation.created")
        #expect(conversation?["conversation"]?["id"] == instanceA.body["conversation_id"], "the unnamed session is not instance A's")
        unnamed.socket.close(code: 1000, reason: "done")
        let agentScoped = try await RealtimeTestClient.connect(server, token: agentAToken, query: "?instance=\(idA)")
        #expect(await agentScoped.next("session.created") != nil)
        await server.stop()
    }

    @Test("a forged token in the browser subprotocol is refused before the upgrade")
    func forgedSubprotocolTokenIsRefused() async throws {
        let server = try TestServer.start()
        let forged = ClientTokenAuthority(secret: "not-the-server-secret-at-all").mint(subject: "mallory").token
        let response = try await HTTPRequestSender.send(server, "GET", "/v1/realtime", headers: [
            "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "realtime, openai-insecure-api-key.\(forged)",
        ])
        #expect(response.status == 401)
        #expect(!response.text.contains(server.secret))
        await server.stop()
    }
}

/// Sends raw HTTP/1.1 requests with exactly the given headers (no client-side rewriting).
enum HTTPRequestSender {
    static func send(_ server: TestServer, _ method: String, _ target: String, headers: [String: String], body: String = "") async throws -> (status: Int, text: String) {
        try await send(port: server.port, method, target, headers: headers, body: body)
    }

    static func send(port: Int, _ method: String, _ target: String, headers: [String: String] = [:], body: String = "") async throws -> (status: Int, text: String) {
        let connection = try await RawConnection.connect(port: port)
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if !body.isEmpty { request += "Content-Length: \(body.utf8.count)\r\n" }
        await connection.send(request + "\r\n" + body)
        let response = await connection.readResponse()
        return response ?? (0, "")
    }
}
