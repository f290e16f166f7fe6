import Foundation
import ParleyNet
import ParleyTesting

/// HAProxy (Debian's `haproxy`) in front of cluster nodes, running the repository's sample
/// configuration, `Examples/cluster/haproxy.cfg`, with only its listening address and its
/// server lines pointed at the nodes under test, and `maxconn` lowered to what the test
/// machine's file limit allows (HAProxy refuses to start when it cannot have two descriptors
/// per connection): the load balancer and health checks a deployment would use. It listens on 127.0.0.5, which no node uses, and logs to standard
/// error (server state changes included), collected in `log`.
final class HAProxyProcess: Sendable {
    let process: Subprocess
    let host = "127.0.0.5"
    let port: Int
    private let output = OutputCollector()
    private let configuration: URL

    /// The base URL clients and backends use instead of a node's.
    var baseURL: URL { URL(string: "http://\(host):\(port)")! }

    /// The sample configuration with `bind` on `host:port` and one server line per node (`a`, `b`, `c`, …).
    static func configuration(nodes: [ServerProcess], host: String, port: Int) throws -> String {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sample = try String(contentsOf: packageRoot.appendingPathComponent("Examples/cluster/haproxy.cfg"), encoding: .utf8)
        let names = "abcdefghij".map(String.init)
        var lines: [String] = []
        for line in sample.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("maxconn ") {
                lines.append("    maxconn 1000")
            } else if trimmed.hasPrefix("bind ") {
                lines.append("    bind \(host):\(port)")
            } else if trimmed.hasPrefix("server ") {
                guard trimmed.hasPrefix("server a ") else { continue }
                for (index, node) in nodes.enumerated() { lines.append("    server \(names[index]) \(node.host):\(node.port) check") }
            } else {
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Starts HAProxy in front of `nodes` and waits until it answers `/readyz` with 200.
    init(nodes: [ServerProcess], directory: URL) async throws {
        // A port number free on 127.0.0.1 is free on 127.0.0.5 too: nothing else listens there.
        port = try ClosedPort().port
        configuration = directory.appendingPathComponent("haproxy-\(UUID().uuidString.prefix(8)).cfg")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Self.configuration(nodes: nodes, host: host, port: port).write(to: configuration, atomically: true, encoding: .utf8)
        process = Subprocess()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
        process.arguments = ["-db", "-f", configuration.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = output
        _ = PipeReader(pipe.fileHandleForReading) { output.append($0) }
        let url = baseURL.appendingPathComponent("/readyz")
        let ready = await ResourceProbe.eventually(within: 30) {
            (try? await HTTPClient.shared.send(HTTPClient.Request(url: url, method: "GET")))?.status == 200
        }
        guard ready else {
            stop()
            throw ServerProcessError(description: "HAProxy did not start: \(log.suffix(2_000))")
        }
    }

    /// What HAProxy wrote so far.
    var log: String { output.text }

    /// Stops HAProxy.
    func stop() {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: configuration)
    }
}
