import Foundation
import ParleyLocal
import ParleyServer
import ParleyStore

/// Options of `parley serve`; each overrides the matching `PARLEY_*` setting.
public struct ServeOptions: Sendable {
    public var host: String?
    public var port: Int?
    public var dataDirectory: String?
    public var envFile: String?
    public var webRoot: String?
    /// A GGUF model for the embedded llama-server (`--llm-model`, over `PARLEY_LLM_MODEL_PATH`).
    public var llmModel: String?
    /// The embedded Whisper model (`--asr-model`, over `PARLEY_ASR_MODEL`).
    public var asrModel: WhisperModel?
    /// A `postgresql://` URL: the store in PostgreSQL (cluster mode) instead of SQLite
    /// (`--database-url`, over `PARLEY_DATABASE_URL`).
    public var databaseURL: String?
    /// The PEM certificate of HTTPS and WSS (`--tls-cert`, over `PARLEY_TLS_CERT`).
    public var tlsCertificate: String?
    /// The PEM private key of HTTPS and WSS (`--tls-key`, over `PARLEY_TLS_KEY`).
    public var tlsPrivateKey: String?

    /// Creates options; `nil` leaves a setting to the environment.
    public init(host: String? = nil, port: Int? = nil, dataDirectory: String? = nil, envFile: String? = nil, webRoot: String? = nil) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.envFile = envFile
        self.webRoot = webRoot
    }
}

/// `parley serve`: the server with its providers, until SIGINT or SIGTERM.
public enum ServeCommand {
    /// Runs the server; returns the exit code (0 after a clean shutdown, 1 on a start-up failure).
    public static func run(options: ServeOptions, environment: [String: String] = ProcessInfo.processInfo.environment) async -> Int32 {
        var merged: [String: String] = [:]
        let envPath = options.envFile ?? ".env"
        if let contents = try? String(contentsOfFile: envPath, encoding: .utf8) {
            do {
                merged = try DotEnvFile.parse(contents)
            } catch {
                return fail(["\(envPath): \(error)"])
            }
        } else if options.envFile != nil {
            return fail(["\(envPath): cannot read the file"])
        }
        merged.merge(environment) { _, fromEnvironment in fromEnvironment }
        if let model = options.llmModel { merged["PARLEY_LLM_MODEL_PATH"] = model }
        if let model = options.asrModel { merged["PARLEY_ASR_MODEL"] = model.rawValue }
        if let certificate = options.tlsCertificate { merged["PARLEY_TLS_CERT"] = certificate }
        if let privateKey = options.tlsPrivateKey { merged["PARLEY_TLS_KEY"] = privateKey }

        var (settings, problems) = ServerSettings.load(environment: merged)
        if let host = options.host { settings.host = host }
        if let port = options.port { settings.port = port }
        if let directory = options.dataDirectory { settings.dataDirectory = URL(fileURLWithPath: directory) }
        if let root = options.webRoot { settings.webRoot = URL(fileURLWithPath: root) }
        if let url = options.databaseURL {
            if let problem = PostgresStore.problem(inURL: url) {
                problems.append("--database-url: \(problem)")
            } else {
                settings.databaseURL = url
            }
        }
        problems += settings.clusterProblems
        if settings.webRoot == nil { settings.webRoot = defaultWebRoot() }
        if !settings.isLoopback && settings.serverSecret == nil {
            problems.append("PARLEY_SERVER_SECRET: required when listening beyond loopback (host \(settings.host))")
        }
        guard problems.isEmpty else { return fail(problems) }

        let secret: String
        if let configured = settings.serverSecret {
            secret = configured
        } else {
            do {
                let (stored, created) = try ServerSecretFile.loadOrCreate(in: settings.dataDirectory)
                secret = stored
                let file = settings.dataDirectory.appendingPathComponent(ServerSecretFile.fileName).path
                info(created ? "Generated a server secret in \(file)." : "Using the server secret in \(file).")
                info("Backends authenticate with: Authorization: Bearer $(cat \(file))")
            } catch {
                return fail(["data directory \(settings.dataDirectory.path): \(error)"])
            }
        }

        let journal: CrashJournal
        do {
            journal = try CrashJournal.open(in: settings.dataDirectory)
        } catch {
            return fail(["data directory \(settings.dataDirectory.path): \(error)"])
        }
        defer { journal.closeCleanly() }
        let log = EventLog { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
            journal.record(line)
        }
        if let crash = journal.previousCrash {
            for line in crash.report { info("parley serve: \(line)") }
            log.log("restarted_after_crash", ["previous_pid": .number(Double(crash.processID)), "previous_started": .string(crash.started)])
        }

        let store: ServerStore
        do {
            store = try settings.openStore()
        } catch let error as PostgresError {
            return fail(["\(options.databaseURL == nil ? "PARLEY_DATABASE_URL" : "--database-url"): \(error.message)"])
        } catch {
            return fail(["data directory \(settings.dataDirectory.path): \(error)"])
        }
        let app: ParleyApp
        // Caught from before the server listens: a signal while it starts is kept for later.
        let shutdownSignal = ShutdownSignal()
        do {
            app = try ParleyApp(settings: settings, secret: secret, store: store, log: log)
            try app.start()
        } catch {
            return fail(["cannot start on \(settings.host):\(settings.port): \(error)"])
        }
        let url = "\(settings.tls == nil ? "http" : "https")://\(settings.host == "::1" ? "[::1]" : settings.host):\(app.port)/"
        do {
            try await app.joinCluster()
        } catch {
            await app.shutdown()
            return fail(["\(options.databaseURL == nil ? "PARLEY_DATABASE_URL" : "--database-url"): cannot join the cluster: \(error)"])
        }
        info("Parley is starting on \(url) (loading providers)…")
        info("Doors on \(url) (SECURITY.md has the details):")
        for line in PublicDoors.lines(for: settings) { info("  \(line)") }
        let providers: ProviderSet
        do {
            providers = try await ProviderFactory.make(settings)
        } catch {
            await app.shutdown()
            return fail(["\(error)"])
        }
        app.providersReady(providers)
        for line in providers.summary { info("  \(line)") }
        if settings.languageModel == .embedded, let ollama = await LocalModelServers.ollama() { info(ollama.suggestion) }
        FileHandle.standardOutput.write(Data("Parley is ready: open \(url)\n".utf8))
        await shutdownSignal.wait()
        info("Shutting down…")
        await app.shutdown()
        return 0
    }

    /// `Web/` next to the executable's package, or in the current directory.
    private static func defaultWebRoot() -> URL? {
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Web"),
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                .deletingLastPathComponent().appendingPathComponent("../../../Web").standardizedFileURL,
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("index.html").path) }
    }

    private static func info(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    private static func fail(_ problems: [String]) -> Int32 {
        for problem in problems { info("parley serve: \(problem)") }
        return 1
    }
}
