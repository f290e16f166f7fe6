import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// The web client in headless Chromium against a real Parley server (`ParleyApp` on a loopback
/// port, started as the server's own tests start it): runs the Python + Selenium tests in
/// `Tests/Browser` and shuts the server down and starts a new one on the same port when they ask
/// (a line on their stdout, answered on their stdin), so reconnection meets a server that really
/// went away.
///
/// The fake microphone plays syllables of a 500 Hz tone and the server's recognizer answers with the
/// pitch it hears, so the user's bubble proves the page captured, resampled and sent the audio
/// intact: a wrong sample rate anywhere on the way changes the number.
@Suite(.serialized, .enabled(if: BrowserTestTools.available))
struct BrowserTests {
    @Test("hold to talk, typing, hands-free, interruptions, denied microphone, server restart")
    func webClientInHeadlessChromium() async throws {
        try await runBrowserTests()
    }

    private func runBrowserTests() async throws {
        let tools = try BrowserTestTools.locate()
        let scratch = try ScratchDirectory()
        let microphoneSound = scratch.url.appendingPathComponent("tone-syllables.wav")
        try ToneSyllables.wav(hertz: PitchRecognizer.toneHertz, seconds: 1.8).write(to: microphoneSound)

        var server = try TestServer.start(providers: Self.providers())
        let port = server.port
        let browser = try LineProcess(
            executable: tools.python,
            arguments: ["-m", "unittest", "-v", "test_web_client"],
            directory: tools.browserTests,
            environment: [
                "PARLEY_URL": "http://127.0.0.1:\(port)",
                "PARLEY_SPEECH_WAV": microphoneSound.path,
                "PARLEY_SPEECH_TEXT": String(PitchRecognizer.toneHertz),
                "PARLEY_CONTROL": "stdio",
                "PARLEY_ARTIFACTS_DIR": tools.packageRoot.appendingPathComponent(".cache/browser-tests").path,
            ]
        )
        for await line in browser.output {
            switch line {
            case "parley-control: stop-server":
                await server.stop()
                browser.send("ok")
            case "parley-control: start-server":
                server = try TestServer.start(providers: Self.providers()) { $0.port = port }
                browser.send("ok")
            default:
                continue
            }
        }
        let status = try await browser.exitStatus(within: .seconds(1200))
        await server.stop()
        let report = browser.errorOutput
        #expect(status == 0, "browser tests failed:\n\(report)")
        #expect(report.contains("\nOK\n"), "unittest reports OK:\n\(report)")
        #expect(!report.contains("skipped"), "no browser test was skipped:\n\(report)")
    }

    /// The deterministic server providers with a recognizer that hears pitch.
    static func providers() -> ProviderSet {
        var providers = TestServer.testProviders()
        providers.recognizer = PitchRecognizer()
        return providers
    }
}

/// A recognizer that hears the pitch of the loud part of an utterance and answers with it in
/// hertz, rounded to 50 Hz ("500"); silence gives an empty transcript.
private struct PitchRecognizer: SpeechRecognizer {
    static let toneHertz = 500
    let sampleRate = 16_000
    let supportsPartials = false

    func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
        let duration = Double(samples.count) / Double(sampleRate)
        let frame = sampleRate / 50
        let levels = stride(from: 0, to: samples.count - frame + 1, by: frame).map { start in
            (samples[start..<start + frame].reduce(0) { $0 + $1 * $1 } / Float(frame)).squareRoot()
        }
        guard let peak = levels.max(), peak > 0.01 else {
            return Transcription(text: "", audioDuration: duration, processingDuration: 0)
        }
        var crossings = 0
        var loudSamples = 0
        for (index, level) in levels.enumerated() where level > peak / 4 {
            let start = index * frame
            loudSamples += frame
            for position in start + 1..<start + frame where (samples[position - 1] < 0) != (samples[position] < 0) {
                crossings += 1
            }
        }
        let hertz = Double(crossings) / 2 / (Double(loudSamples) / Double(sampleRate))
        let rounded = Int((hertz / 50).rounded()) * 50
        return Transcription(text: String(rounded), audioDuration: duration, processingDuration: 0)
    }
}

/// Syllable-like bursts of a pure tone: what the fake microphone plays.
private enum ToneSyllables {
    static let sampleRate = 16_000

    /// A 16 kHz pcm16 WAV of `seconds` of a `hertz` tone whose loudness swells four times a second.
    static func wav(hertz: Int, seconds: Double) -> Data {
        let count = Int(seconds * Double(sampleRate))
        let samples = (0..<count).map { index -> Int16 in
            let time = Double(index) / Double(sampleRate)
            let envelope = 0.6 + 0.4 * sin(2 * Double.pi * 4 * time)
            return Int16(12_000 * envelope * sin(2 * Double.pi * Double(hertz) * time))
        }
        return WAVFile.pcm16Data(samples: samples, format: AudioFormat(sampleRate: sampleRate))
    }
}

/// Where the browser tests and the programs they need are.
private struct BrowserTestTools {
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
private final class LineProcess: Sendable {
    /// Lines written to stdout (the newest 10,000 kept until read); finishes when stdout closes.
    let output: AsyncStream<String>
    private let process: Process
    private let input: FileHandle
    private let errors = OutputCollector()
    private let exit: AsyncStream<Int32>

    init(executable: URL, arguments: [String], directory: URL, environment: [String: String]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        let (exit, exited) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        process.terminationHandler = { finished in
            exited.yield(finished.terminationStatus)
            exited.finish()
        }
        let errors = errors
        stderr.fileHandleForReading.readabilityHandler = { handle in errors.append(handle.availableData) }
        try process.run()
        self.process = process
        self.exit = exit
        input = stdin.fileHandleForWriting
        output = Self.lines(of: stdout.fileHandleForReading)
    }

    /// Everything written to stderr so far.
    var errorOutput: String { errors.text }

    /// Writes one line to stdin.
    func send(_ line: String) {
        input.write(Data((line + "\n").utf8))
    }

    /// The exit status; the process is killed if it has not ended within `limit`.
    func exitStatus(within limit: Duration) async throws -> Int32 {
        let exit = exit
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await exit.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let status else {
            process.terminate()
            throw BrowserTestFailure("the browser tests did not finish within \(limit):\n\(errorOutput)")
        }
        return status
    }

    /// Reads stdout on a thread of its own (the reads block) and hands out whole lines.
    private static func lines(of handle: FileHandle) -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(10_000))
        Thread {
            var pending = Data()
            while case let chunk = handle.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            continuation.finish()
        }.start()
        return lines
    }
}

/// A temporary directory, removed with the value.
private final class ScratchDirectory: Sendable {
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
private struct BrowserTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
