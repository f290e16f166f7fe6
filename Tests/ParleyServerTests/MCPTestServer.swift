import Foundation
import ParleyTesting

/// `Tests/MCP/mcp_test_server.py`, a Streamable-HTTP MCP server built on PyPI's `mcp`, as a
/// child process on a free loopback port: started, waited for until it prints its port, killed.
///
/// `@unchecked Sendable`: `child` and `reader` are guarded by `lock`.
final class MCPTestServer: @unchecked Sendable {
    struct StartFailure: Error, CustomStringConvertible { var description: String }

    let port: Int
    /// The `Authorization` header of every request the server received, one a line.
    let headerLog: URL
    var url: URL { URL(string: "http://127.0.0.1:\(port)/mcp")! }
    private let lock = NSLock()
    private var reader: PipeReader?

    private init(port: Int, headerLog: URL) {
        self.port = port
        self.headerLog = headerLog
    }

    /// Starts the server (requiring `token` when given) and waits up to `deadline` for its port.
    static func start(token: String? = nil, deadline: Duration = .seconds(90)) async throws -> MCPTestServer {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../MCP/mcp_test_server.py").standardizedFileURL
        let headerLog = FileManager.default.temporaryDirectory.appendingPathComponent("mcp-headers-\(UUID().uuidString).log")
        let process = Subprocess()
        process.executableURL = URL(fileURLWithPath: ChildProcess.python)
        process.arguments = ["-u", script.path, "--log-headers", headerLog.path] + (token.map { ["--token", $0] } ?? [])
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let (lines, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        let output = OutputCollector()
        try process.run()
        let reader = PipeReader(pipe.fileHandleForReading, onData: { chunk in
            output.append(chunk)
            continuation.yield(output.text)
        }, onEnd: { continuation.finish() })
        let port = try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask {
                for await text in lines {
                    if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }), let port = Int(line.dropFirst(5)) { return port }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: deadline)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let port else {
            process.terminate()
            throw StartFailure(description: "the MCP test server did not start: \(output.text)")
        }
        let server = MCPTestServer(port: port, headerLog: headerLog)
        server.adopt(process, reader)
        return server
    }

    private var child: Subprocess?
    private func adopt(_ process: Subprocess, _ reader: PipeReader) {
        lock.withLock {
            child = process
            self.reader = reader
        }
    }

    /// Whether the process is still running.
    var isRunning: Bool { lock.withLock { child?.isRunning ?? false } }

    /// The `Authorization` headers received so far.
    var receivedAuthorizations: [String] {
        (try? String(contentsOf: headerLog, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
    }

    /// Kills the server and waits for it to exit.
    func stop() async {
        let child = lock.withLock { self.child }
        child?.signal(SIGKILL)
        _ = await child?.exitStatus(within: .seconds(10))
        try? FileManager.default.removeItem(at: headerLog)
    }

    /// Runs `body` with a fresh server and stops it afterwards, whatever happened.
    static func with(token: String? = nil, _ body: (MCPTestServer) async throws -> Void) async throws {
        let server = try await start(token: token)
        do {
            try await body(server)
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }
}
