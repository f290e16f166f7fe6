import Foundation
import ParleyTesting
import Testing

/// One run of the Python + Selenium browser tests in `Tests/Browser` against a server the
/// caller owns: the tests print "parley-control: stop-server" or "start-server" when they need
/// the server gone or back, and the run answers "ok" once the caller's closure has done it.
struct BrowserTestRun {
    /// unittest's exit status.
    let status: Int32
    /// unittest's report (its standard error).
    let report: String

    /// Runs `tests` (unittest names, e.g. `test_web_client.WebClientTests.test_typed_turn_is_answered_in_speech`)
    /// with `environment` added to the settings harness.py reads, and waits for them to end.
    /// - Throws: `BrowserTestFailure` when the tests do not end within `limit`, or what the
    ///   server closures throw.
    static func run(
        _ tests: [String], tools: BrowserTestTools, environment: [String: String], within limit: Duration,
        stopServer: () async throws -> Void, startServer: () async throws -> Void
    ) async throws -> BrowserTestRun {
        let browser = try LineProcess(
            executable: tools.python,
            arguments: ["-m", "unittest", "-v"] + tests,
            directory: tools.browserTests,
            environment: environment.merging(["PARLEY_CONTROL": "stdio"]) { $1 }
        )
        do {
            for await line in browser.output {
                switch line {
                case "parley-control: stop-server":
                    try await stopServer()
                    browser.send("ok")
                case "parley-control: start-server":
                    try await startServer()
                    browser.send("ok")
                default:
                    continue
                }
            }
        } catch {
            browser.terminate()
            throw error
        }
        let status = try await browser.exitStatus(within: limit)
        return BrowserTestRun(status: status, report: browser.errorOutput)
    }

    /// Records that every test ran (`testCount` of them, when given) and passed; `context`
    /// (e.g. the server's log) goes into the failure messages.
    func expectPassed(
        testCount: Int? = nil, context: @autoclosure () -> String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if let testCount {
            let ran = testCount == 1 ? "Ran 1 test " : "Ran \(testCount) tests "
            #expect(report.contains(ran), "unittest ran \(testCount) tests:\n\(report)", sourceLocation: sourceLocation)
        }
        #expect(status == 0, "browser tests failed:\n\(report)\n\(context())", sourceLocation: sourceLocation)
        #expect(report.contains("\nOK\n"), "unittest reports OK:\n\(report)", sourceLocation: sourceLocation)
        #expect(!report.contains("skipped"), "no browser test was skipped:\n\(report)", sourceLocation: sourceLocation)
    }
}

/// Where the browser tests and the programs they need are.
struct BrowserTestTools {
    let packageRoot: URL
    let browserTests: URL
    let python: URL

    /// Whether Python with Selenium, Chromium and chromedriver are installed.
    static var available: Bool { (try? locate()) != nil }

    static func locate() throws -> BrowserTestTools {
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = URL(fileURLWithPath: ChildProcess.python)
        for path in [python.path, "/usr/bin/chromium", "/usr/bin/chromedriver"]
        where !FileManager.default.isExecutableFile(atPath: path) {
            throw BrowserTestFailure("\(path) is missing (scripts/setup installs it)")
        }
        return BrowserTestTools(
            packageRoot: packageRoot, browserTests: packageRoot.appendingPathComponent("Tests/Browser"), python: python
        )
    }
}

/// A child process whose stdout arrives as lines, whose stderr is collected, and which reads
/// lines on its stdin.
final class LineProcess: Sendable {
    /// Lines written to stdout (the newest 10,000 kept until read); finishes when stdout closes.
    let output: AsyncStream<String>
    private let process: Subprocess
    private let input: FileHandle
    private let errors = OutputCollector()

    init(executable: URL, arguments: [String], directory: URL, environment: [String: String]) throws {
        let process = Subprocess()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        let errors = errors
        try process.run()
        _ = PipeReader(stderr.fileHandleForReading) { errors.append($0) }
        self.process = process
        input = stdin.fileHandleForWriting
        output = PipeReader.lines(of: stdout.fileHandleForReading)
    }

    /// Everything written to stderr so far.
    var errorOutput: String { errors.text }

    /// Writes one line to stdin.
    func send(_ line: String) {
        input.write(Data((line + "\n").utf8))
    }

    /// Asks the process to end (SIGTERM).
    func terminate() {
        process.terminate()
    }

    /// The exit status; the process is killed if it has not ended within `limit`.
    func exitStatus(within limit: Duration) async throws -> Int32 {
        let status = await process.exitStatus(within: limit)
        guard let status else {
            process.terminate()
            throw BrowserTestFailure("the browser tests did not finish within \(limit):\n\(errorOutput)")
        }
        return status
    }
}

/// A temporary directory, removed with the value.
final class ScratchDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Why the browser tests could not run.
struct BrowserTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
