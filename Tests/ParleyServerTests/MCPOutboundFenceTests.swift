import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleyTesting
import Testing

/// Hostile clients of a real server with `PARLEY_MCP_CLIENT_SERVERS=on` naming MCP servers at
/// addresses the server must not reach for them: each is refused with an `error` event before
/// anything is sent, the session goes on, and what a far side answered never reaches the client.
@Suite(.serialized)
struct MCPOutboundFenceTests {
    /// A `session.update` naming `servers` (label, URL) as MCP servers.
    static func naming(_ servers: [(label: String, url: String)]) -> String {
        let tools = servers.map { #"{"type":"mcp","server_label":"\#($0.label)","server_url":"\#($0.url)","require_approval":"never"}"# }
        return #"{"type":"session.update","session":{"type":"realtime","output_modalities":["text"],"tools":[\#(tools.joined(separator: ","))]}}"#
    }

    /// The `error` events of failed tool listings, by the label their message names, once `count` came.
    static func listingErrors(_ client: RealtimeTestClient, count: Int) async -> [String: String] {
        var messages: [String: String] = [:]
        for _ in 0..<count {
            guard let error = await client.next("error", seconds: 60)?["error"] else { break }
            #expect(error["code"]?.stringValue == "mcp_list_tools_failed", "\(error)")
            let message = error["message"]?.stringValue ?? ""
            if let label = message.split(separator: "\"").dropFirst().first { messages[String(label)] = message }
        }
        return messages
    }

    static let allowHint = "; an operator can allow it with PARLEY_OUTBOUND_ALLOW"

    @Test("MCP URLs at 127.0.0.1, localhost, 10.0.0.1 and 169.254.169.254 are refused with an error event; the session goes on")
    func nonPublicAddressesAreRefused() async throws {
        // A real MCP server on loopback: a refusal is not a closed port, and it must hear nothing.
        try await MCPTestServer.with { (mcp: MCPTestServer) async throws in
            let server = try TestServer.start { $0.clientsNameMCPServers = true }
            do {
                let client = try await RealtimeTestClient.connect(server, token: server.clientToken())
                try client.send(Self.naming([
                    ("loop", "http://127.0.0.1:\(mcp.port)/mcp"), ("named", "http://localhost:\(mcp.port)/mcp"),
                    ("private", "http://10.0.0.1/mcp"), ("metadata", "http://169.254.169.254/latest/meta-data/"),
                ]))
                #expect(await client.next("session.updated") != nil)
                let errors = await Self.listingErrors(client, count: 4)
                #expect(errors["loop"] == #"MCP server "loop" URL refused: 127.0.0.1 is a loopback address"# + Self.allowHint)
                #expect(errors["private"] == #"MCP server "private" URL refused: 10.0.0.1 is a private address"# + Self.allowHint)
                #expect(errors["metadata"] == #"MCP server "metadata" URL refused: 169.254.169.254 is a cloud metadata address"# + Self.allowHint)
                let named = try #require(errors["named"])
                #expect(named.hasPrefix(#"MCP server "named" URL refused: localhost resolves to "#) && named.hasSuffix(", a loopback address" + Self.allowHint), "\(named)")
                #expect(mcp.receivedAuthorizations.isEmpty, "the MCP server on loopback was sent \(mcp.receivedAuthorizations.count) requests")

                try client.send(#"{"type":"session.update","session":{"type":"realtime","instructions":"Still here."}}"#)
                #expect(await client.next("session.updated") != nil, "the session goes on after the refusals")
                try await RealtimeHostileInputTests().expectTextTurnWorks(client)
                client.socket.close(code: 1000, reason: "done")
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
    }

    @Test("PARLEY_OUTBOUND_ALLOW lets a client-named server on loopback through; the backend's servers are never fenced")
    func theAllowListOpensItsBlocks() async throws {
        try await MCPTestServer.with { (mcp: MCPTestServer) async throws in
            let server = try TestServer.start { settings in
                settings.clientsNameMCPServers = true
                settings.outboundAllowList = [try! IPAddressRange("127.0.0.1/32")]
            }
            do {
                let client = try await RealtimeTestClient.connect(server, token: server.clientToken())
                try client.send(Self.naming([("calc", "http://127.0.0.1:\(mcp.port)/mcp")]))
                #expect(await client.next("mcp_list_tools.completed", seconds: 60) != nil)
                let listed = try #require(await client.next("conversation.item.done"))
                #expect(listed["item"]?["tools"]?.jsonText.contains("\"add\"") == true)
                client.socket.close(code: 1000, reason: "done")
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
        // The backend (the server secret) names what it likes, as the operator does.
        try await MCPTestServer.with { (mcp: MCPTestServer) async throws in
            let server = try TestServer.start { $0.clientsNameMCPServers = true }
            do {
                let backend = try await RealtimeTestClient.connect(server)
                try backend.send(Self.naming([("calc", "http://127.0.0.1:\(mcp.port)/mcp")]))
                #expect(await backend.next("mcp_list_tools.completed", seconds: 60) != nil)
                backend.socket.close(code: 1000, reason: "done")
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
    }

    @Test("a client-named server redirecting elsewhere is refused, and its error bodies never reach the client")
    func redirectsAndAnswersStayOnTheFarSide() async throws {
        var router = Router()
        router.post("/to-metadata") { _ in
            HTTPResponse(status: 307, headers: ["Location": "http://169.254.169.254/latest/meta-data/"], body: .data(Data("moved".utf8)))
        }
        router.post("/to-localhost") { request in
            HTTPResponse(status: 302, headers: ["Location": "http://localhost:\(request.headers["host"]?.split(separator: ":").last ?? "80")/mcp"], body: .data(Data("moved".utf8)))
        }
        router.post("/secret") { _ in .text("internal secret: hunter2", status: 500) }
        router.post("/not-json") { _ in .text("root:x:0:0:root:/root:/bin/bash") }
        let far = HTTPServer(configuration: HTTPServer.Configuration(port: 0), router: router)
        try far.start()
        let server = try TestServer.start { settings in
            settings.clientsNameMCPServers = true
            settings.outboundAllowList = [try! IPAddressRange("127.0.0.1/32")]
        }
        do {
            let base = "http://127.0.0.1:\(far.port)"
            let client = try await RealtimeTestClient.connect(server, token: server.clientToken())
            try client.send(Self.naming([
                ("hop", "\(base)/to-metadata"), ("home", "\(base)/to-localhost"), ("leak", "\(base)/secret"), ("cat", "\(base)/not-json"),
            ]))
            #expect(await client.next("session.updated") != nil)
            let errors = await Self.listingErrors(client, count: 4)
            #expect(errors["hop"] == #"MCP server "hop" URL refused: 127.0.0.1 redirected to another host, which is not followed"#)
            #expect(errors["home"] == #"MCP server "home" URL refused: 127.0.0.1 redirected to another host, which is not followed"#)
            #expect(errors["leak"] == #"MCP server "leak" answered initialize with HTTP 500"#)
            #expect(errors["cat"] == #"MCP server "cat" sent an invalid answer: initialize answered with something that is not JSON"#)
            let everything = await client.events.map(\.jsonText).joined()
            for farText in ["hunter2", "root:x", "moved", "meta-data"] {
                #expect(!everything.contains(farText), "the client saw \(farText)")
            }
            try await RealtimeHostileInputTests().expectTextTurnWorks(client)
            client.socket.close(code: 1000, reason: "done")
        } catch {
            await server.stop()
            await far.shutdown()
            throw error
        }
        await server.stop()
        await far.shutdown()
    }
}
