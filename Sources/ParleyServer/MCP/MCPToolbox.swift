import Foundation
import ParleyCore
import ParleyNet

/// The MCP servers of one realtime session: a client per server, the tool list of each cached
/// until the server says it changed, and the tools the agent gets from them.
actor MCPToolbox {
    /// A server to use, with the outbound policy its requests follow (`nil` for the operator's servers).
    struct Server: Sendable, Equatable {
        var configuration: MCPServerConfiguration
        var outboundPolicy: OutboundPolicy?
    }

    /// The result of listing one server's tools.
    struct Listing: Sendable {
        /// The server's label.
        var label: String
        /// The tools the model may use (after `allowed_tools`), or why listing failed.
        var outcome: Result<[MCPToolDescription], MCPFailure>
    }

    private var clients: [String: MCPClient] = [:]
    private var lists: [String: [MCPToolDescription]] = [:]
    private var watchers: [String: Task<Void, Never>] = [:]

    /// Uses `servers` from now on: servers no longer named, or changed, are closed.
    /// `onListChanged` is called with a server's label when it says its tools changed.
    /// - Returns: the labels of the servers to list (new or changed), in the order given.
    func use(_ servers: [Server], onListChanged: @escaping @Sendable (String) async -> Void) async -> [String] {
        let wanted = Dictionary(servers.map { ($0.configuration.label, $0) }, uniquingKeysWith: { first, _ in first })
        for (label, client) in clients where Server(configuration: client.configuration, outboundPolicy: client.outboundPolicy) != wanted[label] {
            await drop(label)
        }
        var added: [String] = []
        for server in servers where clients[server.configuration.label] == nil {
            let label = server.configuration.label
            let client = MCPClient(configuration: server.configuration, outboundPolicy: server.outboundPolicy)
            clients[label] = client
            watchers[label] = Task {
                for await _ in client.toolListChanges { await onListChanged(label) }
            }
            added.append(label)
        }
        return added
    }

    /// Lists a server's tools again (after `notifications/tools/list_changed`).
    func list(_ label: String) async -> Listing {
        guard let client = clients[label] else {
            return Listing(label: label, outcome: .failure(MCPFailure(.protocolError, code: -32603, message: "no MCP server \"\(label)\"")))
        }
        let configuration = client.configuration
        do {
            let tools = try await Self.withDeadline(configuration.listTimeout, label: label) { try await client.listTools() }
            let allowed = tools.filter { configuration.allowedTools?.matches($0) ?? true }
            lists[label] = allowed
            return Listing(label: label, outcome: .success(allowed))
        } catch let failure as MCPFailure {
            lists[label] = nil
            return Listing(label: label, outcome: .failure(failure))
        } catch {
            lists[label] = nil
            return Listing(label: label, outcome: .failure(MCPFailure(.http, code: 504, message: "listing the tools of \"\(label)\" was cancelled")))
        }
    }

    /// The agent's tools from every listed server.
    var tools: [any Tool] {
        clients.keys.sorted().flatMap { label in
            (lists[label] ?? []).map { MCPTool(client: clients[label]!, listing: $0) as any Tool }
        }
    }

    /// The names of the tools whose calls wait for the client's approval.
    var toolsRequiringApproval: Set<String> {
        Set(clients.flatMap { label, client in
            (lists[label] ?? []).filter { client.configuration.requireApproval.requiresApproval($0) }.map(\.name)
        })
    }

    /// The label of the server of each tool, by tool name.
    var serverLabels: [String: String] {
        var labels: [String: String] = [:]
        for (label, tools) in lists { for tool in tools { labels[tool.name] = label } }
        return labels
    }

    /// Closes every server's session.
    func close() async {
        for label in clients.keys { await drop(label) }
    }

    private func drop(_ label: String) async {
        watchers.removeValue(forKey: label)?.cancel()
        lists[label] = nil
        await clients.removeValue(forKey: label)?.close()
    }

    /// Runs `operation`, giving up with a 504 `http_error` after `timeout`.
    static func withDeadline<T: Sendable>(
        _ timeout: Duration, label: String, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw MCPFailure(.http, code: 504, message: "MCP server \"\(label)\" did not answer within \(timeout)")
            }
            return value
        }
    }
}
