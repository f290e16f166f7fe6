import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ParleyCore
import ParleyOpenAI

/// A supervised llama.cpp `llama-server` child process speaking the OpenAI API on a free
/// loopback port: the local language model of the embedded stack.
///
/// The server starts on `start()`, which returns once `/health` answers 200. If the process
/// dies it is restarted (after 0.25 s, doubling up to 10 s on repeated quick failures) on the
/// same port, so `baseURL` stays valid; requests in flight during a restart fail with a
/// connection error. The child never outlives Parley: it is stopped by `stop()` and on
/// deinit, and on Linux it carries a parent-death signal, so even SIGKILL or a crash of Parley
/// takes it down (see `ChildProcess`). One server serves all sessions (`parallelSlots`
/// requests decode at once); each conversation asks for its own model with
/// `conversationModel(configuration:)`, so that its history stays cached in a slot.
///
/// ```swift
/// let server = try LocalLLMServer(configuration: .smolLM2())
/// try await server.start()
/// let model = server.conversationModel(configuration: OpenAIConfiguration(baseURL: server.baseURL, model: "smollm2"))
/// ```
public final class LocalLLMServer: Sendable {
    /// How to run `llama-server`.
    public struct Configuration: Sendable, Hashable {
        /// The GGUF model to load.
        public var modelPath: String
        /// The `llama-server` executable.
        public var executablePath: String
        /// CPU threads for decoding. The default is half the cores (at most 4): ggml's worker
        /// threads spin while they wait for each other, so when anything else runs (speech
        /// recognition and synthesis of the same voice pipeline, other sessions) a decode that
        /// wants every core stalls. Measured on a loaded 2-core machine: 2 threads decoded
        /// SmolLM2 at 3–7 tokens/s, 1 thread at 27–39 tokens/s.
        public var threadCount: Int
        /// Total context in tokens, shared by the slots.
        public var contextSize: Int
        /// Requests decoded concurrently (one per active session).
        public var parallelSlots: Int
        /// How long `start()` waits for `/health`.
        public var startupTimeout: Duration
        /// The delay before the first restart after a crash; it doubles on each quick failure.
        public var initialRestartDelay: Duration
        /// The longest delay between restarts.
        public var maximumRestartDelay: Duration
        /// Where the server's output goes (truncated at each start); `nil` picks a file in the
        /// temporary directory.
        public var logPath: String?
        /// More `llama-server` arguments, appended last.
        public var extraArguments: [String]

        /// Creates a configuration.
        public init(
            modelPath: String,
            executablePath: String,
            threadCount: Int = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount / 2)),
            contextSize: Int = 4096,
            parallelSlots: Int = 2,
            startupTimeout: Duration = .seconds(60),
            initialRestartDelay: Duration = .milliseconds(250),
            maximumRestartDelay: Duration = .seconds(10),
            logPath: String? = nil,
            extraArguments: [String] = []
        ) {
            self.modelPath = modelPath
            self.executablePath = executablePath
            self.threadCount = threadCount
            self.contextSize = contextSize
            self.parallelSlots = parallelSlots
            self.startupTimeout = startupTimeout
            self.initialRestartDelay = initialRestartDelay
            self.maximumRestartDelay = maximumRestartDelay
            self.logPath = logPath
            self.extraArguments = extraArguments
        }

        /// SmolLM2-135M-Instruct from the model directory, served by the `llama-server` that
        /// `scripts/setup` built.
        /// - Throws: `LocalModelError.missingFile` naming whichever file is missing.
        public static func smolLM2(locator: ModelLocator = ModelLocator()) throws -> Configuration {
            Configuration(modelPath: try locator.path(of: .smolLM2), executablePath: try locator.llamaServerPath())
        }

        /// A configuration for any GGUF model, with defaults from its metadata: each slot gets
        /// the context the model was trained for up to 4,096 tokens (a spoken conversation's
        /// window is smaller), and a model without a chat template of its own talks ChatML.
        /// - Throws: `GGUFMetadata.ReadError` for a file that is not a GGUF model,
        ///   `LocalModelError` when llama-server is missing.
        public static func gguf(path: String, locator: ModelLocator = ModelLocator()) throws -> Configuration {
            let metadata = try GGUFMetadata(path: path)
            var configuration = Configuration(modelPath: path, executablePath: try locator.llamaServerPath())
            let perSlot = max(256, min(metadata.contextLength ?? 2_048, 4_096))
            configuration.contextSize = perSlot * configuration.parallelSlots
            if !metadata.hasChatTemplate { configuration.extraArguments = ["--chat-template", "chatml"] }
            return configuration
        }
    }

    /// The configuration the server runs with.
    public let configuration: Configuration
    /// The loopback port the server listens on (fixed for the server's lifetime).
    public let port: Int
    /// The file the server's output goes to.
    public let logPath: String

    private let supervisor: LLMProcessSupervisor
    private let healthSession: URLSession
    let slots: LocalLLMSlots

    /// Checks the files and picks a port; the process starts with `start()`.
    /// - Throws: `LocalModelError.missingFile` when the model or the executable is missing,
    ///   `ProviderError` when no loopback port is free.
    public init(configuration: Configuration) throws {
        guard FileManager.default.isReadableFile(atPath: configuration.modelPath) else {
            throw LocalModelError.missingFile(kind: "language model", path: configuration.modelPath)
        }
        guard FileManager.default.isExecutableFile(atPath: configuration.executablePath) else {
            throw LocalModelError.missingFile(kind: "llama-server executable", path: configuration.executablePath)
        }
        do {
            port = try LoopbackPort.pickFree()
        } catch {
            throw ProviderError(.server, provider: "llama-server", message: "no free loopback port: \(error)")
        }
        self.configuration = configuration
        slots = LocalLLMSlots(count: max(1, configuration.parallelSlots))
        logPath = configuration.logPath
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("parley-llama-server-\(port).log").path
        let arguments = [
            "--model", configuration.modelPath,
            "--host", "127.0.0.1",
            "--port", String(port),
            "--threads", String(max(1, configuration.threadCount)),
            "--ctx-size", String(max(256, configuration.contextSize)),
            "--parallel", String(max(1, configuration.parallelSlots)),
            "--jinja",
            "--no-webui",
            // The model shares two cores with the turn's own Whisper and Piper work, which the
            // caller waits for: its threads yield to them (nice 5, SCHED_BATCH) and sleep rather
            // than spin between graph steps. In one conversation on the embedded stack, the first
            // chunk's synthesis took 168–179 ms against 227–271 ms without (two A/B pairs).
            "--prio", "-1",
            "--poll", "0",
        ] + configuration.extraArguments
        supervisor = LLMProcessSupervisor(
            executable: configuration.executablePath, arguments: arguments, logPath: logPath,
            initialRestartDelay: configuration.initialRestartDelay.timeInterval,
            maximumRestartDelay: configuration.maximumRestartDelay.timeInterval
        )
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = 2
        healthSession = URLSession(configuration: sessionConfiguration)
    }

    deinit {
        supervisor.terminateImmediately()
        healthSession.invalidateAndCancel()
    }

    /// The OpenAI-compatible base URL, `http://127.0.0.1:PORT/v1`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/v1")! }

    /// The health endpoint, `http://127.0.0.1:PORT/health`.
    public var healthURL: URL { URL(string: "http://127.0.0.1:\(port)/health")! }

    /// A language model for one conversation: its requests go to a slot of their own while
    /// one is free, with the prompt cached there between turns, so a continuing conversation
    /// reads only its new messages. The slot is free again once every copy of the model is gone.
    /// - Parameter configuration: how to reach this server (`baseURL`) and the model name.
    public func conversationModel(configuration: OpenAIConfiguration) -> LocalConversationModel {
        LocalConversationModel(configuration: configuration, lease: slots.lease())
    }

    /// The pid of the running `llama-server`, or `nil` between restarts and after `stop()`.
    public var processID: Int32? { supervisor.snapshot.processID }

    /// How many times the process died unexpectedly and was restarted.
    public var restartCount: Int { supervisor.snapshot.restartCount }

    /// Starts the process and waits until it is ready.
    /// - Throws: `ProviderError` (provider `llama-server`) when the process exits before it is
    ///   ready (with the end of its output) or is not ready within `startupTimeout`; the
    ///   process is stopped in both cases.
    public func start() async throws {
        supervisor.launch()
        do {
            try await waitUntilReady(timeout: configuration.startupTimeout, failOnExit: true)
        } catch {
            await stop()
            throw error
        }
    }

    /// Waits until the (possibly restarted) process answers `/health` with 200.
    /// - Throws: `ProviderError` with category `timeout` when it is not ready in time.
    public func waitUntilHealthy(timeout: Duration) async throws {
        try await waitUntilReady(timeout: timeout, failOnExit: false)
    }

    /// Stops the process (SIGTERM, SIGKILL after 5 s) and waits until it has exited. No
    /// restart follows; a stopped server cannot be started again.
    public func stop() async {
        supervisor.requestStop()
        await supervisor.waitForExit()
    }

    /// Sends `signal` to the running process; returns its pid, or `nil` if none is running.
    /// For tests and operators that need to simulate a crash.
    @discardableResult
    public func signalProcess(_ signal: Int32) -> Int32? {
        supervisor.signalChild(signal)
    }

    private func waitUntilReady(timeout: Duration, failOnExit: Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let restartsBefore = supervisor.snapshot.restartCount
        while clock.now < deadline {
            try Task.checkCancellation()
            let state = supervisor.snapshot
            if failOnExit, let failure = state.spawnFailure {
                throw ProviderError(.server, provider: "llama-server", message: failure)
            }
            if failOnExit, state.processID == nil, state.restartCount > restartsBefore || !state.isSupervising {
                let exit = state.lastExit.map { "\($0)" } ?? "stopped"
                throw ProviderError(
                    .server, provider: "llama-server",
                    message: "llama-server \(exit) before it was ready. Its last output (\(logPath)):\n\(logTail())"
                )
            }
            if state.processID != nil, await isHealthy() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ProviderError(
            .timeout, provider: "llama-server",
            message: "llama-server was not ready within \(timeout). Its last output (\(logPath)):\n\(logTail())"
        )
    }

    private func isHealthy() async -> Bool {
        do {
            let (_, response) = try await healthSession.data(from: healthURL)
            return (response as? HTTPURLResponse)?.statusCode == 200
        } catch {
            return false
        }
    }

    /// The last lines of the server's output, for error messages.
    private func logTail(lines: Int = 8) -> String {
        guard let handle = FileHandle(forReadingAtPath: logPath) else { return "(no output)" }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 4096 ? size - 4096 : 0)
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }
}
