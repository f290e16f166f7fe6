import Foundation
import ParleyLocal
import ParleyNet
import ParleyStore

/// Where one provider comes from.
public enum ProviderChoice: Sendable, Hashable {
    /// The embedded engine (whisper.cpp, flite, llama.cpp).
    case embedded
    /// An OpenAI-compatible HTTP service.
    case remote(baseURL: URL, apiKey: String?, model: String)
}

/// Which embedded text-to-speech engine speaks.
public enum EmbeddedVoice: String, Sendable, Hashable {
    /// The Piper neural voice en_US-joe-medium (onnxruntime, phonemes from espeak-ng).
    case piper
    /// flite's cmu_us_slt diphone voice.
    case flite
}

/// Everything `parley serve` is configured with, read from flags, the environment and `.env`,
/// and checked once at start.
public struct ServerSettings: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var dataDirectory = URL(fileURLWithPath: ".parley")
    /// The PostgreSQL database of cluster mode (`postgresql://…`); `nil` keeps the store in
    /// a SQLite file in the data directory.
    public var databaseURL: String?
    /// The server secret; `nil` until one is loaded or generated.
    public var serverSecret: String?
    /// The default agent's instructions from `PARLEY_SYSTEM_PROMPT`; `nil` uses the model's own
    /// (`systemPrompt`).
    public var configuredSystemPrompt: String?
    public var speechRecognition: ProviderChoice = .embedded
    public var speechSynthesis: ProviderChoice = .embedded
    public var languageModel: ProviderChoice = .embedded
    /// A GGUF model of the user's for the embedded llama-server (`PARLEY_LLM_MODEL_PATH`,
    /// `--llm-model`); `nil` runs the bundled SmolLM2.
    public var localLanguageModelPath: String?
    /// The voice for remote speech synthesis.
    public var voice: String?
    /// The embedded voice: the Piper neural voice (default; flite when it cannot load) or flite
    /// (`PARLEY_TTS=flite`).
    public var embeddedVoice: EmbeddedVoice = .piper
    /// The embedded Whisper model (`PARLEY_ASR_MODEL`, `--asr-model`): tiny.en by default, or
    /// the multilingual base (tiny.en when it cannot load).
    public var whisperModel: WhisperModel = .tinyEnglish
    /// `silero` (default when its model is present) or `energy`.
    public var voiceActivityDetector = "silero"
    /// Folder with the embedded models.
    public var modelDirectory: URL?
    /// The most concurrent realtime sessions.
    public var maximumSessions = 500
    /// The most sessions one user (a client token's subject) holds at once, on every door
    /// together (`PARLEY_MAX_SESSIONS_PER_USER`).
    public var maximumSessionsPerUser = 10
    /// The most sessions one client token holds at once (`PARLEY_MAX_SESSIONS_PER_TOKEN`).
    public var maximumSessionsPerToken = 5
    /// The most tokens any response may have, whatever a client asks for (`"inf"` included;
    /// `PARLEY_OUTPUT_TOKEN_CEILING`, default 4096, OpenAI's largest finite value).
    public var outputTokenCeiling = 4_096
    /// The longest a session lasts before the server ends it with `session_expired`
    /// (`PARLEY_MAX_SESSION_SECONDS`; 60 minutes, as OpenAI's).
    public var maximumSessionLength: Duration = .seconds(3600)
    /// The most realtime sessions across every node of a cluster (`PARLEY_CLUSTER_MAX_SESSIONS`);
    /// `nil` for no cluster-wide limit. Needs `databaseURL` (see `clusterProblems`);
    /// `maximumSessions` stays each node's own cap.
    public var clusterMaximumSessions: Int?
    /// The URL other nodes and operators reach this node at (`PARLEY_NODE_URL`); by default
    /// `http://HOST:PORT`. Cluster mode only.
    public var nodeURL: String?
    /// How long a cluster node that was asked to stop (SIGTERM) keeps serving its live sessions
    /// while it refuses new ones (`PARLEY_DRAIN_SECONDS`); those still running then are closed
    /// and their clients reconnect through another node. Cluster mode only.
    public var drainSeconds = 20
    /// The longest reply, in tokens, of the server's language model when neither the agent nor
    /// the client sets one; `nil` picks the default for the model (see `replyTokenLimit`).
    public var maxOutputTokens: Int?
    /// Silence after which a server-VAD turn is transcribed while its window still runs
    /// (`VoiceSessionConfiguration.preemptiveTranscriptionAfterMs`); nil transcribes only at the turn's end.
    /// The default, 30 ms, starts as soon as the VAD hears silence: Whisper takes longer than the
    /// 300 ms window, so every millisecond waited here is one the user waits after the window.
    public var preemptiveTranscriptionAfterMs: Int? = 30
    /// Whether a server-VAD turn's response starts on that early transcript, held back until
    /// the turn ends (`VoiceSessionConfiguration.preemptiveGeneration`; agents without tools).
    public var preemptiveGeneration = true
    /// How far ahead of real time a realtime WebSocket client's speech is sent, in
    /// milliseconds (`PARLEY_WEBSOCKET_AUDIO_LEAD_MS`; 0 sends it as fast as it is made). A
    /// client that just plays what it gets then holds at most this much when the user talks
    /// over the agent, so the server's hold and cancellation stop what the listener hears.
    public var webSocketAudioLeadMs = 200
    /// Client tokens minted per minute per client address.
    public var tokenMintsPerMinute = 30
    /// `false` turns `/v1/local/token` (client tokens without the secret, for the local
    /// single-user setup) off; it is never on beyond loopback.
    public var allowsLocalTokens: Bool?
    /// The UDP port of WebRTC calls (`PARLEY_WEBRTC_PORT`); 0 picks a free one.
    public var webRTCPort = 0
    /// The address WebRTC peers reach this server at, announced as its ICE candidate
    /// (`PARLEY_WEBRTC_PUBLIC_ADDRESS`), when it is not the listening host (NAT, 0.0.0.0).
    public var webRTCPublicAddress: String?
    /// STUN and TURN servers the web page's calls use (`PARLEY_WEBRTC_ICE_SERVERS`, a JSON array
    /// of `{"urls", "username", "credential"}`), handed to the page with its token.
    public var webRTCICEServers: [ICEServer] = []
    /// A WebRTC call whose ICE and DTLS are not done after this ends (and frees its session).
    public var webRTCSetupTimeout: Duration = .seconds(15)
    /// A WebRTC call that receives nothing for this long ends: its peer vanished.
    public var webRTCSilenceTimeout: Duration = .seconds(20)
    /// The folder of the web client.
    public var webRoot: URL?
    /// Whether calls are recorded when their agent does not say (`PARLEY_RECORDINGS=on`).
    public var recordsCalls = false
    /// How long recordings are kept and how much disk they may take (`PARLEY_RECORDINGS_RETENTION_DAYS`,
    /// `PARLEY_RECORDINGS_QUOTA_MB`).
    public var recordingLimits = RecordingLimits()
    /// The bearer token `/metrics` requires besides the server secret (`PARLEY_METRICS_TOKEN`);
    /// `nil` leaves `/metrics` open to whoever reaches the port. Never logged or printed.
    public var metricsToken: String?
    /// Whether sessions opened with a client token may name MCP servers of their own in
    /// `session.tools` (`PARLEY_MCP_CLIENT_SERVERS=on`): the server then calls the URLs a token
    /// holder gives it that resolve to public addresses (or to `outboundAllowList`). Off, only the
    /// backend (the server secret) may; agents' servers always work.
    public var clientsNameMCPServers = false
    /// Non-public addresses that URLs a client names (its MCP servers) may still reach
    /// (`PARLEY_OUTBOUND_ALLOW`, comma-separated CIDR blocks such as `10.1.0.0/16,fd00::/8`).
    /// Loopback, private, link-local, metadata and other non-public addresses outside it are
    /// refused (see `OutboundPolicy`); the operator's own URLs are never checked.
    public var outboundAllowList: [IPAddressRange] = []
    /// Where per-turn traces go (OTLP/HTTP JSON), from `OTEL_EXPORTER_OTLP_ENDPOINT` and friends; `nil` exports none.
    public var tracing: OTLPConfiguration?
    /// Phone calls: the Twilio auth token and the public URL Twilio reaches the server at.
    public var telephony = TelephonySettings()
    /// The SIP door: its port and the trunks that may call (`PARLEY_SIP_*`).
    public var sip = SIPSettings()
    /// The certificate and key of HTTPS and WSS (`PARLEY_TLS_CERT`, `PARLEY_TLS_KEY`); `nil` serves plain HTTP.
    public var tls: TLSConfiguration?

    /// Creates default settings.
    public init() {}

    /// Whether the host is a loopback address.
    public var isLoopback: Bool { ["127.0.0.1", "localhost", "::1"].contains(host) }

    /// The reply limit sessions start with: the configured one, else 150 tokens (some 40 s
    /// of speech) for the embedded SmolLM2, which can fall into repeating itself and would
    /// otherwise talk until its context is full, and none for a remote model.
    public var replyTokenLimit: Int? {
        maxOutputTokens ?? (languageModel == .embedded ? 150 : nil)
    }

    /// What is wrong with the cluster settings once every source is merged: a cluster-wide
    /// limit needs the shared database.
    public var clusterProblems: [String] {
        clusterMaximumSessions != nil && databaseURL == nil
            ? ["PARLEY_CLUSTER_MAX_SESSIONS: needs PARLEY_DATABASE_URL or --database-url (the nodes of a cluster share one PostgreSQL)"] : []
    }

    /// The instructions of sessions whose agent has none: the configured prompt, else one that
    /// suits the model. The bundled SmolLM2 gets the identity it was trained with: any other
    /// name pulls it off course (it reads "Parley" as French "parlez" and answers in French).
    public var systemPrompt: String {
        if let configuredSystemPrompt { return configuredSystemPrompt }
        return languageModel == .embedded && localLanguageModelPath == nil
            ? "You are a helpful AI assistant named SmolLM, trained by Hugging Face. Answer in one or two short sentences."
            : "You are a helpful voice assistant. Answer briefly, in one or two short spoken sentences."
    }

    /// The sampling temperature of the server's language model when neither the agent nor the
    /// client sets one: 0.2 for the embedded model, the provider's own for a remote one. A small
    /// model stays on topic and in the question's language: at 0.3 SmolLM2 answered "What is
    /// the capital of France?" in French one time in five, and stayed in French. (Its loops are
    /// held off by the DRY sampler, `LocalConversationModel`; llama.cpp's repetition penalty
    /// pushed it into French too, by penalising the English words the question had just used.)
    public var replyTemperature: Double? { languageModel == .embedded ? 0.2 : nil }

    /// Whether the local token endpoint is on: only on a server listening on loopback, unless
    /// `PARLEY_LOCAL_TOKENS=false` turns it off there too (`LocalCallerCheck` checks each caller).
    public var localTokensEnabled: Bool { isLoopback && allowsLocalTokens != false }

    /// Reads settings from environment variables (after `.env` values, which they override).
    /// - Returns: the settings and one line per problem found; an empty list means valid.
    public static func load(environment: [String: String]) -> (ServerSettings, problems: [String]) {
        var settings = ServerSettings()
        var problems: [String] = []
        func value(_ key: String) -> String? {
            guard let raw = environment[key]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        func integer(_ key: String, in range: ClosedRange<Int>) -> Int? {
            guard let raw = value(key) else { return nil }
            guard let number = Int(raw), range.contains(number) else {
                problems.append("\(key): \"\(raw)\" is not a whole number from \(range.lowerBound) to \(range.upperBound)")
                return nil
            }
            return number
        }
        func boolean(_ key: String) -> Bool? {
            guard let raw = value(key) else { return nil }
            switch raw.lowercased() {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default:
                problems.append("\(key): \"\(raw)\" is not true or false")
                return nil
            }
        }
        func provider(_ kind: String, embeddedNames: [String], defaultModel: String?) -> ProviderChoice? {
            let choice = value("PARLEY_\(kind)")?.lowercased()
            let url = value("PARLEY_\(kind)_URL")
            guard choice == "openai" || (choice == nil && url != nil) else {
                if let choice, !embeddedNames.contains(choice), choice != "embedded" {
                    problems.append("PARLEY_\(kind): \"\(choice)\" is not a provider (use \((embeddedNames + ["openai"]).joined(separator: ", ")))")
                }
                return nil
            }
            guard let url, let baseURL = URL(string: url), let scheme = baseURL.scheme, ["http", "https"].contains(scheme) else {
                problems.append("PARLEY_\(kind)_URL: an http(s) base URL is required for an OpenAI-compatible provider, e.g. https://api.openai.com/v1")
                return nil
            }
            guard let model = value("PARLEY_\(kind)_MODEL") ?? defaultModel else {
                problems.append("PARLEY_\(kind)_MODEL: the model name is required with PARLEY_\(kind)_URL")
                return nil
            }
            return .remote(baseURL: baseURL, apiKey: value("PARLEY_\(kind)_API_KEY"), model: model)
        }

        if let host = value("PARLEY_HOST") { settings.host = host }
        if let port = integer("PARLEY_PORT", in: 0...65535) { settings.port = port }
        if let port = integer("PARLEY_WEBRTC_PORT", in: 0...65535) { settings.webRTCPort = port }
        if let address = value("PARLEY_WEBRTC_PUBLIC_ADDRESS") {
            var parsed = in_addr()
            if inet_pton(AF_INET, address, &parsed) == 1 {
                settings.webRTCPublicAddress = address
            } else {
                problems.append("PARLEY_WEBRTC_PUBLIC_ADDRESS: \"\(address)\" is not an IPv4 address")
            }
        }
        if let servers = value("PARLEY_WEBRTC_ICE_SERVERS") {
            switch ICEServer.parse(servers) {
            case .success(let parsed): settings.webRTCICEServers = parsed
            case .failure(let problem): problems.append("PARLEY_WEBRTC_ICE_SERVERS: \(problem)")
            }
        }
        if let directory = value("PARLEY_DATA_DIR") { settings.dataDirectory = URL(fileURLWithPath: directory) }
        if let url = value("PARLEY_DATABASE_URL") {
            if let problem = PostgresStore.problem(inURL: url) {
                problems.append("PARLEY_DATABASE_URL: \(problem)")
            } else {
                settings.databaseURL = url
            }
        }
        if let secret = value("PARLEY_SERVER_SECRET") {
            if secret.utf8.count < 16 {
                problems.append("PARLEY_SERVER_SECRET: must be at least 16 characters")
            } else {
                settings.serverSecret = secret
            }
        }
        if let prompt = value("PARLEY_SYSTEM_PROMPT") { settings.configuredSystemPrompt = prompt }
        if let choice = provider("ASR", embeddedNames: ["whisper"], defaultModel: "whisper-1") { settings.speechRecognition = choice }
        // With PARLEY_ASR_URL the variable names the service's model; embedded, a Whisper model.
        if settings.speechRecognition == .embedded, let name = value("PARLEY_ASR_MODEL") {
            if let model = WhisperModel(rawValue: name.lowercased()) {
                settings.whisperModel = model
            } else {
                let names = WhisperModel.allCases.map(\.rawValue).joined(separator: " or ")
                problems.append("PARLEY_ASR_MODEL (--asr-model): \"\(name)\" is not a Whisper model setup installs (use \(names))")
            }
        }
        if let choice = provider("TTS", embeddedNames: ["piper", "flite"], defaultModel: "tts-1") { settings.speechSynthesis = choice }
        if value("PARLEY_TTS")?.lowercased() == "flite" { settings.embeddedVoice = .flite }
        if let choice = provider("LLM", embeddedNames: ["llama"], defaultModel: nil) { settings.languageModel = choice }
        if let path = value("PARLEY_LLM_MODEL_PATH") {
            let expanded = (path as NSString).expandingTildeInPath
            if settings.languageModel != .embedded {
                problems.append("PARLEY_LLM_MODEL_PATH: a local model and PARLEY_LLM_URL exclude each other; set one")
            } else {
                do {
                    _ = try GGUFMetadata(path: expanded)
                    settings.localLanguageModelPath = expanded
                } catch {
                    problems.append("PARLEY_LLM_MODEL_PATH (--llm-model): \(error)")
                }
            }
        }
        settings.voice = value("PARLEY_TTS_VOICE")
        if let vad = value("PARLEY_VAD")?.lowercased() {
            if ["silero", "energy"].contains(vad) {
                settings.voiceActivityDetector = vad
            } else {
                problems.append("PARLEY_VAD: \"\(vad)\" is not a voice activity detector (use silero or energy)")
            }
        }
        if let directory = value("PARLEY_MODEL_DIR") { settings.modelDirectory = URL(fileURLWithPath: directory) }
        if let maximum = integer("PARLEY_MAX_SESSIONS", in: 1...100_000) { settings.maximumSessions = maximum }
        if let maximum = integer("PARLEY_MAX_SESSIONS_PER_USER", in: 1...100_000) { settings.maximumSessionsPerUser = maximum }
        if let maximum = integer("PARLEY_MAX_SESSIONS_PER_TOKEN", in: 1...100_000) { settings.maximumSessionsPerToken = maximum }
        if let seconds = integer("PARLEY_MAX_SESSION_SECONDS", in: 1...86_400) { settings.maximumSessionLength = .seconds(seconds) }
        if let tokens = integer("PARLEY_OUTPUT_TOKEN_CEILING", in: 1...1_000_000) { settings.outputTokenCeiling = tokens }
        if let maximum = integer("PARLEY_CLUSTER_MAX_SESSIONS", in: 1...10_000_000) { settings.clusterMaximumSessions = maximum }
        if let url = value("PARLEY_NODE_URL") { settings.nodeURL = url }
        if let seconds = integer("PARLEY_DRAIN_SECONDS", in: 0...3_600) { settings.drainSeconds = seconds }
        if let limit = integer("PARLEY_MAX_OUTPUT_TOKENS", in: 1...1_000_000) { settings.maxOutputTokens = limit }
        if let delay = integer("PARLEY_PREEMPTIVE_TRANSCRIPTION_MS", in: 0...10_000) {
            settings.preemptiveTranscriptionAfterMs = delay == 0 ? nil : delay
        }
        if let generation = boolean("PARLEY_PREEMPTIVE_GENERATION") { settings.preemptiveGeneration = generation }
        if let lead = integer("PARLEY_WEBSOCKET_AUDIO_LEAD_MS", in: 0...60_000) { settings.webSocketAudioLeadMs = lead }
        if let rate = integer("PARLEY_TOKEN_RATE_PER_MINUTE", in: 1...100_000) { settings.tokenMintsPerMinute = rate }
        if let local = boolean("PARLEY_LOCAL_TOKENS") { settings.allowsLocalTokens = local }
        if let root = value("PARLEY_WEB_ROOT") { settings.webRoot = URL(fileURLWithPath: root) }
        if let recordings = boolean("PARLEY_RECORDINGS") { settings.recordsCalls = recordings }
        settings.recordingLimits = RecordingLimits.load(value, problems: &problems)
        if let token = value("PARLEY_METRICS_TOKEN") {
            if token.utf8.count < 16 {
                problems.append("PARLEY_METRICS_TOKEN: must be at least 16 characters")
            } else {
                settings.metricsToken = token
            }
        }
        if let clientServers = boolean("PARLEY_MCP_CLIENT_SERVERS") { settings.clientsNameMCPServers = clientServers }
        if let allowed = value("PARLEY_OUTBOUND_ALLOW") {
            for block in allowed.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !block.isEmpty {
                do {
                    settings.outboundAllowList.append(try IPAddressRange(block))
                } catch {
                    problems.append("PARLEY_OUTBOUND_ALLOW: \(error)")
                }
            }
        }
        settings.tracing = OTLPConfiguration.load(environment: environment, problems: &problems)
        settings.telephony = TelephonySettings.load(value, problems: &problems)
        settings.sip = SIPSettings.load(value, problems: &problems)
        settings.tls = TLSSettings.configuration(certificate: value("PARLEY_TLS_CERT"), privateKey: value("PARLEY_TLS_KEY"), problems: &problems)
        return (settings, problems)
    }
}
