import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleyTesting

/// A real Parley server on a free loopback port with fast, deterministic providers.
struct TestServer {
    let app: ParleyApp
    let secret = "test-server-secret-0123456789"
    /// The Twilio auth token every test server has, with which the simulated Twilio signs.
    static let twilioAuthToken = "test-twilio-auth-token-0123456789ab"
    let dataDirectory: URL

    var port: Int { app.port }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts a server; `providers` default to the deterministic test set.
    static func start(
        providers: ProviderSet? = nil, startsReady: Bool = true, log: EventLog = .silent, configure: (inout ServerSettings) -> Void = { _ in }
    ) throws -> TestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-server-\(UUID().uuidString)")
        var settings = ServerSettings()
        settings.port = 0
        settings.dataDirectory = directory
        settings.webRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Web").standardizedFileURL
        settings.telephony.twilioAuthToken = twilioAuthToken
        configure(&settings)
        let server = TestServer(
            app: try ParleyApp(
                settings: settings, secret: "test-server-secret-0123456789",
                providers: providers ?? (startsReady ? testProviders() : nil), log: log
            ),
            dataDirectory: directory
        )
        try server.app.start()
        return server
    }

    /// The deterministic provider set.
    static func testProviders() -> ProviderSet {
        ProviderSet(
            recognizer: FixedSpeechRecognizer(), languageModel: KeywordLanguageModel(),
            synthesizer: ScriptedSpeechSynthesizer(millisecondsPerWord: 100),
            makeVoiceActivityDetector: { EnergyVAD() },
            makeResampler: { from, to in try! LinearResampler(from: from, to: to) }
        )
    }

    /// A client token for `user`.
    func clientToken(user: String = "tester", agentID: String? = nil, instanceID: String? = nil) -> String {
        ClientTokenAuthority(secret: secret).mint(subject: user, agentID: agentID, instanceID: instanceID).token
    }

    func stop() async { await app.shutdown() }
}

/// Runs a child process to completion with a deadline and returns its exit code and output.
enum ChildProcess {
    struct Result {
        var status: Int32
        var output: String
    }

    /// The Python of the test virtualenv.
    static var python: String {
        if let configured = ProcessInfo.processInfo.environment["PARLEY_PYTHON"] { return configured }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/parley/venv/bin/python").path
    }

    static func run(_ executable: String, _ arguments: [String], deadline: Duration = .seconds(120)) async throws -> Result {
        let process = Subprocess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = OutputCollector()
        try process.run()
        let reader = PipeReader(pipe.fileHandleForReading) { output.append($0) }
        let status = await process.exitStatus(within: deadline)
        if status == nil { process.terminate() }
        await reader.end()
        return Result(status: status ?? -1, output: output.text + (status == nil ? "\n[killed after the deadline]" : ""))
    }
}

/// Collects a child's output from its pipe's reading thread. `@unchecked Sendable`: `data` is guarded by `lock`.
final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ chunk: Data) { lock.withLock { data.append(chunk) } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}

extension TestServer {
    /// Sends a request and returns the status and the body parsed as JSON (`.null` when it is not JSON).
    func request(
        _ method: String, _ path: String, json: String? = nil, token: String?? = .none
    ) async throws -> (status: Int, body: JSONValue, headers: [String: String]) {
        var headers = ["Content-Type": "application/json"]
        switch token {
        case .none: headers["Authorization"] = "Bearer \(secret)"
        case .some(let value?): headers["Authorization"] = "Bearer \(value)"
        case .some(nil): break
        }
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: baseURL.appendingPathComponent(path), method: method, headers: headers, body: json.map { Data($0.utf8) }
        ))
        let body = (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null
        return (response.status, body, response.headers)
    }
}
