import Foundation
import Testing
@testable import ParleyServer

@Suite struct ClientTokenTests {
    let authority = ClientTokenAuthority(secret: "server-secret-for-tests")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func validTokenVerifies() throws {
        let (token, claims) = authority.mint(subject: "user-1", agentID: "agent_a", lifetime: 600, now: now)
        let verified = try authority.verify(token, now: now.addingTimeInterval(599))
        #expect(verified == claims)
        #expect(verified.expiresAt == Int(now.timeIntervalSince1970) + 600)
        try verified.checkScope(agentID: "agent_a", instanceID: "inst_x")
    }

    @Test func expiredTokenIsRefused() {
        let (token, _) = authority.mint(subject: "user-1", lifetime: 60, now: now)
        #expect(throws: ClientTokenError.expired) { try authority.verify(token, now: now.addingTimeInterval(60)) }
    }

    @Test func lifetimeIsClampedToADay() throws {
        let (token, _) = authority.mint(subject: "u", lifetime: 7 * 24 * 3600, now: now)
        #expect(try authority.verify(token, now: now).expiresAt == Int(now.timeIntervalSince1970) + 24 * 3600)
    }

    @Test func forgedSignatureIsRefused() {
        let (token, _) = ClientTokenAuthority(secret: "another-secret").mint(subject: "user-1", now: now)
        #expect(throws: ClientTokenError.badSignature) { try authority.verify(token, now: now) }
    }

    @Test func tamperedPayloadIsRefused() throws {
        let (token, _) = authority.mint(subject: "user-1", agentID: "agent_a", now: now)
        var parts = token.split(separator: ".").map(String.init)
        let forged = #"{"sub":"admin","exp":9999999999,"iat":0,"jti":"x"}"#
        parts[1] = Base64URL.encode(Data(forged.utf8))
        #expect(throws: ClientTokenError.badSignature) { try authority.verify(parts.joined(separator: "."), now: now) }
    }

    @Test func algNoneIsRefused() {
        let header = Base64URL.encode(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(Data(#"{"sub":"admin","exp":9999999999,"iat":0,"jti":"x"}"#.utf8))
        #expect(throws: ClientTokenError.unsupportedAlgorithm("none")) { try authority.verify("\(header).\(payload).", now: now) }
        let hs512 = Base64URL.encode(Data(#"{"alg":"HS512"}"#.utf8))
        #expect(throws: ClientTokenError.unsupportedAlgorithm("HS512")) { try authority.verify("\(hs512).\(payload).AAAA", now: now) }
    }

    @Test func wrongScopeIsRefused() throws {
        let (token, _) = authority.mint(subject: "u", agentID: "agent_a", instanceID: "inst_1", now: now)
        let claims = try authority.verify(token, now: now)
        #expect(throws: ClientTokenError.outOfScope) { try claims.checkScope(agentID: "agent_b", instanceID: "inst_1") }
        #expect(throws: ClientTokenError.outOfScope) { try claims.checkScope(agentID: "agent_a", instanceID: "inst_2") }
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "!!!.???.###", "e30.e30.e30", String(repeating: "a", count: 5000)])
    func malformedTokensAreRefused(token: String) {
        #expect(throws: ClientTokenError.self) { try authority.verify(token, now: now) }
    }
}

/// Compact tokens: short enough for the browser's subprotocol header, as strict as JWTs.
@Suite struct CompactClientTokenTests {
    let authority = ClientTokenAuthority(secret: "server-secret-for-tests")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func fitsTheSubprotocolHeaderAndVerifies() throws {
        let (token, expiresAt) = authority.mintCompact(forLocalUser: true, lifetime: 600, now: now)
        #expect(token.count <= 60)
        #expect(("realtime, openai-insecure-api-key." + token).utf8.count < 127)
        let claims = try authority.verify(token, now: now.addingTimeInterval(599))
        #expect(claims.subject == "local-user" && claims.expiresAt == expiresAt && claims.agentID == nil)
    }

    @Test func expiredTamperedAndForeignTokensAreRefused() {
        let (token, _) = authority.mintCompact(forLocalUser: false, lifetime: 60, now: now)
        #expect(throws: ClientTokenError.expired) { try authority.verify(token, now: now.addingTimeInterval(60)) }
        var tampered = Array(token)
        tampered[5] = tampered[5] == "A" ? "B" : "A"
        #expect(throws: ClientTokenError.self) { try authority.verify(String(tampered), now: now) }
        let foreign = ClientTokenAuthority(secret: "another-secret").mintCompact(forLocalUser: true, now: now).token
        #expect(throws: ClientTokenError.badSignature) { try authority.verify(foreign, now: now) }
        for malformed in ["pk_", "pk_.", "pk_AAAA.BBBB", "pk_" + String(repeating: "A", count: 80)] {
            #expect(throws: ClientTokenError.self) { try authority.verify(malformed, now: now) }
        }
    }
}
