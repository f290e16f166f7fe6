import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import Testing

/// Every REST route over real HTTP, with its errors.
@Suite struct RESTTests {
    @Test func readinessWaitsForTheProvidersWhileLivenessDoesNot() async throws {
        let starting = try TestServer.start(providers: nil, startsReady: false)
        let notReady = try await starting.request("GET", "/readyz", token: .some(nil))
        #expect(notReady.status == 503 && notReady.body["error"]?["code"]?.stringValue == "starting")
        #expect(try await starting.request("GET", "/healthz", token: .some(nil)).status == 200)
        starting.app.providersReady(TestServer.testProviders())
        #expect(try await starting.request("GET", "/readyz", token: .some(nil)).status == 200)
        await starting.stop()
    }

    @Test func metricsAreInPrometheusFormat() async throws {
        let server = try TestServer.start()
        let response = try await HTTPClient.shared.send(HTTPClient.Request(url: server.baseURL.appendingPathComponent("/metrics")))
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(response.status == 200)
        #expect(text.contains("# TYPE parley_active_sessions gauge"))
        #expect(text.contains("parley_turns_total 0"))
        await server.stop()
    }

    @Test func theWebClientIsServedAtTheRoot() async throws {
        let server = try TestServer.start()
        let response = try await HTTPClient.shared.send(HTTPClient.Request(url: server.baseURL.appendingPathComponent("/")))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("data-testid=\"talk\""))
        await server.stop()
    }

    @Test func tokensAreMintedOnlyWithTheSecretAndVerify() async throws {
        let server = try TestServer.start()
        #expect(try await server.request("POST", "/v1/tokens", json: #"{"user":"ada"}"#, token: .some(nil)).status == 401)
        #expect(try await server.request("POST", "/v1/tokens", json: #"{"user":"ada"}"#, token: .some(server.clientToken())).status == 403)
        #expect(try await server.request("POST", "/v1/tokens", json: #"{"agent_id":"a"}"#).status == 400)
        #expect(try await server.request("POST", "/v1/tokens", json: #"{"user":"ada","ttl_seconds":999999}"#).status == 400)
        #expect(try await server.request("POST", "/v1/tokens", json: "{not json").status == 400)

        let minted = try await server.request("POST", "/v1/tokens", json: #"{"user":"ada","agent_id":"agent_x","ttl_seconds":60}"#)
        #expect(minted.status == 201)
        let token = try #require(minted.body["token"]?.stringValue)
        let claims = try ClientTokenAuthority(secret: server.secret).verify(token)
        #expect(claims.subject == "ada" && claims.agentID == "agent_x")
        #expect(!(minted.body.jsonText.contains(server.secret)))

        let secret = try await server.request("POST", "/v1/realtime/client_secrets", json: #"{"expires_after":{"anchor":"created_at","seconds":120}}"#)
        #expect(secret.status == 200)
        #expect(secret.body["value"]?.stringValue != nil && secret.body["expires_at"]?.numberValue != nil)
        await server.stop()
    }

    @Test func localTokensAreOnOnLoopbackAndCanBeTurnedOff() async throws {
        let server = try TestServer.start()
        let local = try await server.request("POST", "/v1/local/token", token: .some(nil))
        #expect(local.status == 200 && local.body["value"]?.stringValue != nil)
        await server.stop()

        let closed = try TestServer.start { $0.allowsLocalTokens = false }
        let refused = try await closed.request("POST", "/v1/local/token", token: .some(nil))
        #expect(refused.status == 403 && refused.body["error"]?["code"]?.stringValue == "local_tokens_disabled")
        await closed.stop()
    }

    @Test func tokenMintingIsRateLimitedPerAddress() async throws {
        // Two a minute: the bucket holds two and refills one every 30 s, so of four requests
        // the last two are refused, less one for each 30 s a starved machine took over them.
        let server = try TestServer.start { $0.tokenMintsPerMinute = 2 }
        var statuses: [Int] = []
        let started = ContinuousClock.now
        for _ in 0..<4 { statuses.append(try await server.request("POST", "/v1/local/token", token: .some(nil)).status) }
        let refills = Int((ContinuousClock.now - started) / .seconds(30))
        #expect(statuses.prefix(2) == [200, 200])
        #expect(statuses.filter { $0 == 429 }.count >= 2 - refills, "\(statuses)")
        await server.stop()
    }

    @Test func agentsCanBeCreatedReadUpdatedAndDeleted() async throws {
        let server = try TestServer.start()
        let definition = #"{"name":"Concierge","instructions":"Be brief.","llm":{"api_key":"sk-upstream-secret","temperature":0.3},"tools":[{"type":"builtin","name":"calculate"},{"type":"webhook","name":"lookup","url":"http://127.0.0.1:9/lookup","headers":{"X-Key":"webhook-secret"}}]}"#
        let created = try await server.request("POST", "/v1/agents", json: definition)
        #expect(created.status == 201)
        let id = try #require(created.body["id"]?.stringValue)
        #expect(!created.body.jsonText.contains("sk-upstream-secret") && !created.body.jsonText.contains("webhook-secret"))

        let listed = try await server.request("GET", "/v1/agents")
        #expect(listed.body["data"].map { if case .array(let agents) = $0 { agents.count } else { 0 } } == 1)
        #expect(try await server.request("GET", "/v1/agents/\(id)").body["name"]?.stringValue == "Concierge")

        let patched = try await server.request("PATCH", "/v1/agents/\(id)", json: #"{"name":"Front desk"}"#)
        #expect(patched.status == 200 && patched.body["name"]?.stringValue == "Front desk")
        #expect(patched.body["instructions"]?.stringValue == "Be brief.")

        #expect(try await server.request("DELETE", "/v1/agents/\(id)").status == 200)
        #expect(try await server.request("DELETE", "/v1/agents/\(id)").status == 404)
        #expect(try await server.request("GET", "/v1/agents/\(id)").status == 404)
        await server.stop()
    }

    @Test(arguments: [
        (#"{"name":""}"#, "name"),
        (#"{"tools":[{"type":"shell","name":"rm"}]}"#, "tools[0].type"),
        (#"{"tools":[{"type":"webhook","name":"x","url":"ftp://nowhere"}]}"#, "tools[0].url"),
        (#"{"tools":[{"type":"builtin","name":"calculate"},{"type":"builtin","name":"calculate"}]}"#, "used twice"),
        (#"{"llm":{"temperature":7}}"#, "llm.temperature"),
        (#"{"name":12}"#, "name"),
        ("[1,2", "JSON"),
    ])
    func invalidAgentsAreRefusedWithTheReason(body: String, mentions: String) async throws {
        let server = try TestServer.start()
        let response = try await server.request("POST", "/v1/agents", json: body)
        #expect(response.status == 400)
        #expect(response.body["error"]?["message"]?.stringValue?.contains(mentions) == true, "\(response.body.jsonText)")
        await server.stop()
    }

    @Test func agentRoutesNeedTheSecret() async throws {
        let server = try TestServer.start()
        #expect(try await server.request("GET", "/v1/agents", token: .some(nil)).status == 401)
        #expect(try await server.request("GET", "/v1/agents", token: .some("wrong-secret")).status == 401)
        #expect(try await server.request("GET", "/v1/agents", token: .some(server.clientToken())).status == 403)
        await server.stop()
    }

    @Test func instancesStartWithATokenAndEnd() async throws {
        let server = try TestServer.start()
        #expect(try await server.request("POST", "/v1/agents/agent_missing/instances", json: #"{"user":"u"}"#).status == 404)
        let agent = try await server.request("POST", "/v1/agents", json: #"{"name":"Helper"}"#)
        let agentID = try #require(agent.body["id"]?.stringValue)
        #expect(try await server.request("POST", "/v1/agents/\(agentID)/instances", json: "{}").status == 400)

        let instance = try await server.request("POST", "/v1/agents/\(agentID)/instances", json: #"{"user":"grace"}"#)
        #expect(instance.status == 201)
        let instanceID = try #require(instance.body["id"]?.stringValue)
        let token = try #require(instance.body["client_secret"]?["value"]?.stringValue)
        let claims = try ClientTokenAuthority(secret: server.secret).verify(token)
        #expect(claims.instanceID == instanceID && claims.agentID == agentID && claims.subject == "grace")
        #expect(instance.body["url"]?.stringValue?.hasSuffix("/v1/realtime?instance=\(instanceID)") == true)

        #expect(try await server.request("GET", "/v1/instances/\(instanceID)").body["status"]?.stringValue == "waiting")
        #expect(try await server.request("POST", "/v1/instances/\(instanceID)/interrupt").status == 409)
        let conversationID = try #require(instance.body["conversation_id"]?.stringValue)
        let items = try await server.request("GET", "/v1/conversations/\(conversationID)/items")
        #expect(items.status == 200 && items.body["data"] == .array([]))
        #expect(try await server.request("GET", "/v1/conversations/conv_missing/items").status == 404)

        #expect(try await server.request("DELETE", "/v1/instances/\(instanceID)").body["status"]?.stringValue == "ended")
        #expect(try await server.request("GET", "/v1/instances/\(instanceID)").body["status"]?.stringValue == "ended")
        #expect(try await server.request("GET", "/v1/instances/inst_missing").status == 404)
        await server.stop()
    }

    @Test func deletingAnInstanceEndsItsLiveSession() async throws {
        let server = try TestServer.start()
        let (instance, client) = try await RealtimeTestClient.connectToNewInstance(server, agentName: "Helper", user: "grace")
        let instanceID = try #require(instance["id"]?.stringValue)
        #expect(await client.next("session.created") != nil)

        #expect(try await server.request("DELETE", "/v1/instances/\(instanceID)").body["status"]?.stringValue == "ended")
        #expect(await client.closes(within: 20), "the server closes the deleted instance's socket")
        await server.stop()
    }

    @Test func unknownRoutesAndMethodsGetJSONErrors() async throws {
        let server = try TestServer.start()
        #expect(try await server.request("GET", "/v1/nothing-here").status == 404)
        #expect(try await server.request("PUT", "/v1/agents").status == 405)
        await server.stop()
    }
}
