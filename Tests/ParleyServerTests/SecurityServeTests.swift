import Foundation
import ParleyServer
import Testing
import ParleyTesting

/// `parley serve` as a real process: it refuses to listen beyond loopback without a server
/// secret, lists its doors at start, and the secret it generates for loopback use is private
/// and never printed.
@Suite("Security: parley serve start-up")
struct SecurityServeTests {
    static func scratchDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("parley-serve-\(UUID().uuidString)")
    }

    /// Waits up to `seconds` for the process to exit; `nil` when it is still running.
    static func exitStatus(of server: ServerProcess, within seconds: Double) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await server.exitStatus() }
            group.addTask {
                try? await Task.sleep(for: TestDeadline.seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test("beyond loopback without a secret, the server refuses to start", arguments: [
        (["--host", "0.0.0.0"], [String: String]()), (["--host", "::"], [:]), ([], ["PARLEY_HOST": "0.0.0.0"]),
        (["--host", "0.0.0.0"], ["PARLEY_SERVER_SECRET": "short"]), (["--host", "LOCALHOST.example"], [:]),
    ])
    func refusesToListenBeyondLoopbackWithoutASecret(arguments: [String], extra: [String: String]) async throws {
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ServerProcess.environment(upstreams: upstreams, secret: nil).merging(extra) { $1 }
        let server = try ServerProcess(arguments: ["--port", "0", "--data-dir", directory.appendingPathComponent("data").path] + arguments,
                                       environment: environment, dataDirectory: directory)
        let status = await Self.exitStatus(of: server, within: 30)
        if status == nil { _ = await server.terminate() }
        #expect(status == 1, "\(arguments) \(extra): exit status \(status.map(String.init) ?? "none: it kept running")")
        #expect(server.standardError.contains("PARLEY_SERVER_SECRET"), "the refusal names the missing setting: \(server.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("data/server-secret").path),
                "a secret was generated for a public address")
    }

    @Test("beyond loopback with a secret it starts, with local tokens off, and lists its doors without printing a secret")
    func startsBeyondLoopbackWithASecret() async throws {
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let metricsToken = "scrape-token-0123456789abcdef"
        var environment = ServerProcess.environment(upstreams: upstreams)
        environment["PARLEY_METRICS_TOKEN"] = metricsToken
        let server = try ServerProcess(arguments: ["--host", "0.0.0.0", "--port", "0", "--data-dir", directory.path],
                                       environment: environment, dataDirectory: directory)
        try await server.waitUntilReady()
        let local = try await HTTPRequestSender.send(port: server.port, "POST", "/v1/local/token")
        #expect(local.status == 403, "a public server hands out local tokens: \(local.status)")
        let health = try await HTTPRequestSender.send(port: server.port, "GET", "/healthz")
        #expect(health.status == 200)
        let metrics = try await HTTPRequestSender.send(port: server.port, "GET", "/metrics")
        #expect(metrics.status == 401, "/metrics answered without its token: \(metrics.status)")
        #expect(await server.terminate() == 0)
        #expect(server.standardError.contains("Doors on http://0.0.0.0:\(server.port)/"), "\(server.standardError)")
        var settings = ServerSettings()
        settings.host = "0.0.0.0"
        settings.metricsToken = metricsToken
        for door in PublicDoors.lines(for: settings) {
            #expect(server.standardError.contains("\n  \(door)\n"), "not printed: \(door)")
        }
        #expect(!server.standardError.contains(ServerProcess.secret), "the configured secret was printed")
        #expect(!server.standardError.contains(metricsToken), "the metrics token was printed")
    }

    @Test("on loopback without a secret, it generates one readable only by its owner and never prints it")
    func generatedSecretIsPrivate() async throws {
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data")
        let server = try ServerProcess(arguments: ["--port", "0", "--data-dir", data.path],
                                       environment: ServerProcess.environment(upstreams: upstreams, secret: nil), dataDirectory: directory)
        try await server.waitUntilReady()
        let file = data.appendingPathComponent("server-secret")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0, "the secret file is readable by others")
        let secret = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.count >= 32)
        #expect(await server.terminate() == 0)
        #expect(!server.standardError.contains(secret), "the generated secret was printed")
    }
}
