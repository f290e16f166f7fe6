import Foundation
import ParleyCore
import ParleyNet
@testable import ParleyServer
import Testing

/// `MCPClient` against a real Streamable-HTTP MCP server from PyPI's `mcp` package.
@Suite("MCPClient", .serialized)
struct MCPClientTests {
    private static func client(_ server: MCPTestServer, token: String? = "secret-token", path: String = "/mcp") -> MCPClient {
        MCPClient(configuration: MCPServerConfiguration(
            label: "test", url: URL(string: "http://127.0.0.1:\(server.port)\(path)")!, authorization: token, requireApproval: .never
        ))
    }

    @Test("lists the tools and calls one, with the bearer token and a session")
    func listAndCall() async throws {
        try await MCPTestServer.with(token: "secret-token") { server in
            let client = Self.client(server)
            let tools = try await client.listTools()
            #expect(Set(tools.map(\.name)).isSuperset(of: ["add", "slow_echo", "fail", "crash", "count_calls", "unlock_tool"]))
            let add = try #require(tools.first { $0.name == "add" })
            #expect(add.description == "Adds two numbers.")
            #expect(add.inputSchema["required"] == .array([.string("a"), .string("b")]))
            #expect(try await client.callTool("add", arguments: ["a": 2, "b": 40]) == "42")
            // The server's notifications/progress reach the tool's progress reporter, in order.
            let heard = ProgressWords()
            let echoed = try await ToolProgress.$reporter.withValue(ToolProgressReporter { heard.append($0) }) {
                try await client.callTool("slow_echo", arguments: ["text": "streamed", "seconds": 0.2])
            }
            #expect(echoed == "streamed")
            #expect(heard.all == ["step 1 of 2", "step 2 of 2"])
            await client.close()
            #expect(server.receivedAuthorizations.count >= 4)
            #expect(server.receivedAuthorizations.allSatisfy { $0 == "Bearer secret-token" })
        }
    }

    @Test("a wrong token is an http_error 401, a tool's own error a tool_execution_error")
    func typedErrors() async throws {
        try await MCPTestServer.with(token: "secret-token") { server in
            let intruder = Self.client(server, token: "wrong")
            await #expect(throws: MCPFailure.self) { try await intruder.listTools() }
            do {
                _ = try await intruder.listTools()
            } catch let failure as MCPFailure {
                #expect(failure.kind == .http && failure.code == 401)
                #expect(!failure.message.contains("wrong"))
            }
            let client = Self.client(server)
            do {
                _ = try await client.callTool("fail", arguments: ["message": "the shop is closed"])
                Issue.record("the failing tool succeeded")
            } catch let failure as MCPFailure {
                #expect(failure.kind == .toolExecution)
                #expect(failure.message.contains("the shop is closed"))
                #expect(MCPFailure(toolOutput: "Error: " + failure.modelText) == failure)
            }
            do {
                _ = try await client.callTool("no_such_tool", arguments: [:])
                Issue.record("an unknown tool succeeded")
            } catch let failure as MCPFailure {
                #expect(failure.kind == .toolExecution || failure.kind == .protocolError)
            }
            await client.close()
        }
    }

    @Test("garbage is a protocol_error, a closed port an http_error 503")
    func garbageAndDown() async throws {
        try await MCPTestServer.with { server in
            let garbage = Self.client(server, token: nil, path: "/garbage")
            do {
                _ = try await garbage.listTools()
                Issue.record("garbage was accepted")
            } catch let failure as MCPFailure {
                #expect(failure.kind == .protocolError && failure.code == -32700, "\(failure)")
                #expect(!failure.message.contains("this is not JSON-RPC"), "the far side's answer is not quoted: \(failure)")
            }
        }
        let closed = MCPClient(configuration: MCPServerConfiguration(label: "gone", url: URL(string: "http://127.0.0.1:1/mcp")!))
        do {
            _ = try await closed.listTools()
            Issue.record("a closed port answered")
        } catch let failure as MCPFailure {
            #expect(failure.kind == .http && failure.code == 503, "\(failure)")
        }
    }

    @Test("with an outbound policy, a server on loopback is refused before anything is sent (403), and allowed by the list")
    func outboundPolicy() async throws {
        try await MCPTestServer.with { (server: MCPTestServer) async throws in
            let configuration = MCPServerConfiguration(label: "near", url: server.url, requireApproval: .never)
            let fenced = MCPClient(configuration: configuration, outboundPolicy: OutboundPolicy())
            do {
                _ = try await fenced.listTools()
                Issue.record("a loopback server was reached under the policy")
            } catch let failure as MCPFailure {
                #expect(failure.kind == .http && failure.code == 403)
                #expect(failure.message == #"MCP server "near" URL refused: 127.0.0.1 is a loopback address; an operator can allow it with PARLEY_OUTBOUND_ALLOW"#)
            }
            #expect(server.receivedAuthorizations.isEmpty)
            let allowed = MCPClient(configuration: configuration, outboundPolicy: OutboundPolicy(allowing: [try IPAddressRange("127.0.0.1")]))
            #expect(try await allowed.listTools().contains { $0.name == "add" })
            #expect(try await allowed.callTool("add", arguments: ["a": 1, "b": 2]) == "3")
            await allowed.close()
        }
    }

    @Test("only tools a model can call by name are taken")
    func callableNames() {
        #expect(MCPClient.isCallableName("lookup_order-2"))
        #expect(!MCPClient.isCallableName(""))
        #expect(!MCPClient.isCallableName("drop table; --"))
        #expect(!MCPClient.isCallableName("ünïcode"))
        #expect(!MCPClient.isCallableName(String(repeating: "a", count: 65)))
    }

    @Test("a call slower than its timeout is an http_error 504 for the model")
    func slowServer() async throws {
        try await MCPTestServer.with { server in
            let client = MCPClient(configuration: MCPServerConfiguration(
                label: "test", url: server.url, requireApproval: .never, callTimeout: .milliseconds(300)
            ))
            let listing = try #require(try await client.listTools().first { $0.name == "slow_echo" })
            let tool = MCPTool(client: client, listing: listing)
            let result = await ToolRegistry([tool]).execute(
                ToolCall(id: "c", name: "slow_echo", arguments: #"{"text":"late","seconds":5}"#), timeout: .seconds(60)
            )
            #expect(result.isError)
            #expect(MCPFailure(toolOutput: result.output)?.kind == .http && MCPFailure(toolOutput: result.output)?.code == 504, "\(result.output)")
            await client.close()
        }
    }

    @Test("a server going down mid-call is an http_error, not a hang")
    func serverDiesMidCall() async throws {
        try await MCPTestServer.with { server in
            let client = Self.client(server, token: nil)
            _ = try await client.listTools()
            do {
                _ = try await client.callTool("crash", arguments: [:])
                Issue.record("the crashing call succeeded")
            } catch let failure as MCPFailure {
                #expect(failure.kind == .http, "\(failure)")
            }
            await client.close()
        }
    }

    @Test("notifications/tools/list_changed is reported, and the new list has the new tool")
    func listChanged() async throws {
        try await MCPTestServer.with { (server: MCPTestServer) async throws in
            let client = Self.client(server, token: nil)
            #expect(try await !client.listTools().contains { $0.name == "secret_tool" })
            var changes = client.toolListChanges.makeAsyncIterator()
            #expect(try await client.callTool("unlock_tool", arguments: [:]) == "unlocked")
            let changed: Void? = await changes.next()
            #expect(changed != nil)
            #expect(try await client.listTools().contains { $0.name == "secret_tool" })
            #expect(try await client.callTool("secret_tool", arguments: [:]) == "the secret is 42")
            await client.close()
        }
    }
}

/// The progress words a tool call reported, collected from whichever thread reports them.
private final class ProgressWords: @unchecked Sendable {  // `lock` guards `words`.
    private let lock = NSLock()
    private var words: [String] = []

    func append(_ word: String) { lock.withLock { words.append(word) } }
    var all: [String] { lock.withLock { words } }
}
