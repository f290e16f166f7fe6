import Foundation
import ParleyLocal

/// `parley serve`: declares the server's options and hands them to the server.
struct ServeLauncher: ParleyCommand {
    static let spec = CommandSpec(
        name: "serve",
        abstract: "Run the Parley server: realtime voice endpoint, REST API and web client.",
        discussion: "With nothing configured it runs the embedded offline stack (whisper.cpp, the Piper voice, llama.cpp) and, "
            + "when no server secret is set, generates one into the data directory. Settings come from the "
            + "environment and a .env file; the flags below override them.",
        options: [
            .option("host", value: "address", help: "The address to listen on (default 127.0.0.1)."),
            .option("port", value: "port", help: "The port to listen on (default 8080; 0 picks a free one)."),
            .option("data-dir", value: "path", help: "Where the database and a generated secret are kept (default ./.parley)."),
            .option("env-file", value: "path", help: "A .env file with PARLEY_* settings (default ./.env when present)."),
            .option("web-root", value: "path", help: "The folder of the web client served at / (default ./Web)."),
            .option("llm-model", value: "path", help: "A GGUF model of your own for the embedded llama-server, instead of SmolLM2."),
            .option("asr-model", value: "name", help: "The embedded Whisper model: tiny.en (the default, English only) or base (multilingual)."),
            .option("database-url", value: "url", help: "A postgresql:// URL: keep the store in PostgreSQL instead of SQLite (cluster mode)."),
            .option("tls-cert", value: "path", help: "A PEM certificate (chain): serve HTTPS and WSS with it, no proxy needed. Needs --tls-key."),
            .option("tls-key", value: "path", help: "The PEM private key of --tls-cert."),
        ],
        environment: [
            EnvironmentSpec("PARLEY_SERVER_SECRET", "Signs client tokens and authorises the REST API."),
            EnvironmentSpec("PARLEY_DATABASE_URL", "A postgresql:// URL, as --database-url."),
            EnvironmentSpec("PARLEY_SYSTEM_PROMPT", "The default agent's instructions."),
            EnvironmentSpec("PARLEY_TLS_CERT", "A PEM certificate, as --tls-cert."),
            EnvironmentSpec("PARLEY_TLS_KEY", "A PEM private key, as --tls-key."),
            EnvironmentSpec("PARLEY_LLM_URL", "An OpenAI-compatible chat API instead of the embedded model."),
            EnvironmentSpec("PARLEY_LLM_MODEL_PATH", "A GGUF model for the embedded llama-server when --llm-model is not given."),
            EnvironmentSpec("PARLEY_ASR_URL", "An OpenAI-compatible transcription API instead of whisper.cpp."),
            EnvironmentSpec("PARLEY_ASR_MODEL", "The Whisper model when --asr-model is not given; with PARLEY_ASR_URL, the service's model."),
            EnvironmentSpec("PARLEY_TTS", "The embedded voice: piper (the default neural voice) or flite."),
            EnvironmentSpec("PARLEY_TTS_URL", "An OpenAI-compatible speech API instead of the embedded voice."),
            EnvironmentSpec("PARLEY_MAX_OUTPUT_TOKENS", "The longest reply in tokens (default 150 with the embedded model, none with PARLEY_LLM_URL)."),
        ],
        examples: [
            "parley serve", "parley serve --host 0.0.0.0 --port 9000 --data-dir /var/lib/parley",
            "parley serve --llm-model ~/models/qwen2.5-1.5b-instruct-q4_k_m.gguf",
            "parley serve --asr-model base",
        ],
        command: ServeLauncher.self
    )

    /// The server reads its own `.env` file (`--env-file`).
    static let readsDotEnvFile = false

    /// The address to listen on.
    var host: String?
    /// The port to listen on.
    var port: Int?
    /// The data directory.
    var dataDirectory: String?
    /// The `.env` file.
    var envFile: String?
    /// The web client's folder.
    var webRoot: String?
    /// A GGUF model for the embedded llama-server.
    var llmModel: String?
    /// The embedded Whisper model.
    var asrModel: WhisperModel?
    /// The PostgreSQL database.
    var databaseURL: String?
    /// The HTTPS certificate and key.
    var tlsCertificate: String?
    var tlsPrivateKey: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        host = try arguments.value("host", .nonEmpty)
        port = try arguments.value("port", .port)
        dataDirectory = try arguments.value("data-dir", .nonEmpty)
        envFile = try arguments.value("env-file", .nonEmpty)
        webRoot = try arguments.value("web-root", .nonEmpty)
        llmModel = try arguments.value("llm-model", .nonEmpty)
        asrModel = try arguments.value("asr-model", .whisperModel)
        databaseURL = try arguments.value("database-url", .nonEmpty)
        tlsCertificate = try arguments.value("tls-cert", .nonEmpty)
        tlsPrivateKey = try arguments.value("tls-key", .nonEmpty)
    }

    func run(_ context: CommandContext) async throws {
        var options = ServeOptions(host: host, port: port, dataDirectory: dataDirectory, envFile: envFile, webRoot: webRoot)
        options.llmModel = llmModel
        options.asrModel = asrModel
        options.databaseURL = databaseURL
        options.tlsCertificate = tlsCertificate
        options.tlsPrivateKey = tlsPrivateKey
        guard await ServeCommand.run(options: options, environment: context.environment) == 0 else {
            throw CommandFailure.alreadyReported
        }
    }
}

extension ValueParser where Value == WhisperModel {
    /// A Whisper model setup installs, by name: `tiny.en` or `base`.
    static let whisperModel = ValueParser { text in
        WhisperModel(rawValue: text.lowercased()).map { .success($0) }
            ?? .failure(ValueProblem(reason: "expected " + WhisperModel.allCases.map(\.rawValue).joined(separator: " or ")))
    }
}
