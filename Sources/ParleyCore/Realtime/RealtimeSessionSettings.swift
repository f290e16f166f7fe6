import Foundation

/// What a response may produce.
public enum RealtimeModality: String, Sendable, Hashable, CaseIterable {
    /// Text only.
    case text
    /// Speech, with its transcript.
    case audio
}

/// A limit on the tokens of one response.
public enum RealtimeTokenLimit: Sendable, Hashable {
    /// At most this many tokens (1…4096 in OpenAI's API).
    case limited(Int)
    /// No limit beyond the model's own (`"inf"`).
    case unlimited
}

/// An audio format of the realtime protocol, the same for every chunk in one direction.
public enum RealtimeAudioFormat: String, Sendable, Hashable, CaseIterable {
    /// 16-bit little-endian PCM at 24 kHz (GA `audio/pcm`, beta `pcm16`).
    case pcm16
    /// G.711 μ-law at 8 kHz (GA `audio/pcmu`, beta `g711_ulaw`).
    case pcmu
    /// G.711 A-law at 8 kHz (GA `audio/pcma`, beta `g711_alaw`).
    case pcma

    /// Samples per second.
    public var sampleRate: Int { self == .pcm16 ? RealtimeSessionSettings.supportedAudioRate : G711.sampleRate }

    /// The G.711 law, for the telephone formats.
    public var law: G711.Law? {
        switch self {
        case .pcm16: nil
        case .pcmu: .muLaw
        case .pcma: .aLaw
        }
    }

    /// The GA `format.type`.
    public var gaName: String {
        switch self {
        case .pcm16: "audio/pcm"
        case .pcmu: "audio/pcmu"
        case .pcma: "audio/pcma"
        }
    }

    /// The beta format name.
    public var betaName: String {
        switch self {
        case .pcm16: "pcm16"
        case .pcmu: "g711_ulaw"
        case .pcma: "g711_alaw"
        }
    }
}

/// How turns end.
public enum RealtimeTurnDetection: Sendable, Hashable {
    /// No turn detection (`turn_detection: null`): the client commits the audio buffer itself.
    case manual
    /// Server voice activity detection ends turns after silence, or, with an eagerness
    /// (`semantic_vad`), when a turn-completion model judges a pause to end the turn.
    case serverVAD(ServerVADSettings)
}

/// What a session does with the user's audio.
public enum RealtimeSessionType: String, Sendable, Hashable {
    /// A conversation: the agent answers (`realtime`).
    case realtime
    /// Dictation: the audio is transcribed and nothing answers (`transcription`; beta
    /// `transcription_session.update`).
    case transcription
}

/// Transcription of the user's audio.
public enum RealtimeInputTranscription: Sendable, Hashable {
    /// No transcripts of the input (`null`).
    case disabled
    /// Transcribe the input, with the optional model, language (ISO-639-1) and prompt.
    case enabled(model: String?, language: String?, prompt: String?)
}

/// The settings a `session.update` can change, normalised across both dialects. Every field
/// is optional: `nil` means "not mentioned", so an update leaves that setting as it was.
public struct RealtimeSessionSettings: Sendable, Hashable {
    /// `.transcription` for a transcription-only session; `nil` is a conversation (`realtime`).
    public var sessionType: RealtimeSessionType?
    /// The system instructions.
    public var instructions: String?
    /// The voice's name (or its custom voice id).
    public var voice: String?
    /// Speaking rate, 1.0 is normal (OpenAI allows 0.25…1.5).
    public var speed: Double?
    /// Whether responses are spoken (`[.audio]`, with transcripts) or text only (`[.text]`).
    /// Decoding normalises to one of these two; beta's `["text", "audio"]` is `[.audio]`.
    public var outputModalities: [RealtimeModality]?
    /// The format of the input audio.
    public var inputAudioFormat: RealtimeAudioFormat?
    /// The format of the output audio.
    public var outputAudioFormat: RealtimeAudioFormat?
    /// Server VAD turns, or manual commits.
    public var turnDetection: RealtimeTurnDetection?
    /// Transcription of the user's audio.
    public var inputTranscription: RealtimeInputTranscription?
    /// Tools the client executes itself; an empty array clears them.
    public var tools: [ToolDefinition]?
    /// The MCP servers among the session's `tools` (`{"type": "mcp", …}`), `nil` when it has none.
    public var mcpServers: [MCPServerConfiguration]?
    /// Whether and which tool the model must call.
    public var toolChoice: ToolChoice?
    /// Sampling temperature (beta only; GA sessions have none).
    public var temperature: Double?
    /// The most tokens per response.
    public var maxOutputTokens: RealtimeTokenLimit?
    /// Parley's extension `parley_events`: whether the client wants Parley's own `parley.*`
    /// events (live transcript replacements, tool progress, turn metrics). Never written back.
    public var parleyEvents: Bool?
    /// Parley's extension `parley_interruption`: how speech over the agent is told apart from
    /// backchannels and noise. Never written back.
    public var interruption: InterruptionSettings?
    /// Noise reduction of the input: `.some(nil)` turns it off (`noise_reduction: null`).
    public var noiseReduction: NoiseReduction??
    /// Parley's extension `parley_echo_cancellation`: whether the session takes its own output
    /// out of its input (for clients that cannot cancel echo). Never written back.
    public var echoCancellation: Bool?

    /// The sample rate of pcm16 audio in the protocol: 24 kHz.
    public static let supportedAudioRate = 24_000

    /// Creates settings; every field left out is "not mentioned".
    public init(
        instructions: String? = nil, voice: String? = nil, speed: Double? = nil,
        outputModalities: [RealtimeModality]? = nil, inputAudioFormat: RealtimeAudioFormat? = nil, outputAudioFormat: RealtimeAudioFormat? = nil,
        turnDetection: RealtimeTurnDetection? = nil, inputTranscription: RealtimeInputTranscription? = nil,
        tools: [ToolDefinition]? = nil, toolChoice: ToolChoice? = nil, temperature: Double? = nil,
        maxOutputTokens: RealtimeTokenLimit? = nil, parleyEvents: Bool? = nil, sessionType: RealtimeSessionType? = nil,
        interruption: InterruptionSettings? = nil, noiseReduction: NoiseReduction?? = nil, echoCancellation: Bool? = nil
    ) {
        self.echoCancellation = echoCancellation
        self.noiseReduction = noiseReduction
        self.interruption = interruption
        self.sessionType = sessionType
        self.instructions = instructions
        self.voice = voice
        self.speed = speed
        self.outputModalities = outputModalities
        self.inputAudioFormat = inputAudioFormat
        self.outputAudioFormat = outputAudioFormat
        self.turnDetection = turnDetection
        self.inputTranscription = inputTranscription
        self.tools = tools
        self.toolChoice = toolChoice
        self.temperature = temperature
        self.maxOutputTokens = maxOutputTokens
        self.parleyEvents = parleyEvents
    }

    /// These settings with every field `update` mentions replaced by the update's value.
    public func merging(_ update: RealtimeSessionSettings) -> RealtimeSessionSettings {
        RealtimeSessionSettings(
            instructions: update.instructions ?? instructions,
            voice: update.voice ?? voice,
            speed: update.speed ?? speed,
            outputModalities: update.outputModalities ?? outputModalities,
            inputAudioFormat: update.inputAudioFormat ?? inputAudioFormat,
            outputAudioFormat: update.outputAudioFormat ?? outputAudioFormat,
            turnDetection: update.turnDetection ?? turnDetection,
            inputTranscription: update.inputTranscription ?? inputTranscription,
            tools: update.tools ?? tools,
            toolChoice: update.toolChoice ?? toolChoice,
            temperature: update.temperature ?? temperature,
            maxOutputTokens: update.maxOutputTokens ?? maxOutputTokens,
            parleyEvents: update.parleyEvents ?? parleyEvents,
            sessionType: update.sessionType ?? sessionType,
            interruption: update.interruption ?? interruption,
            noiseReduction: update.noiseReduction ?? noiseReduction,
            echoCancellation: update.echoCancellation ?? echoCancellation
        ).with(mcpServers: update.mcpServers ?? mcpServers)
    }

    private func with(mcpServers: [MCPServerConfiguration]?) -> RealtimeSessionSettings {
        var copy = self
        copy.mcpServers = mcpServers
        return copy
    }

    /// Whether responses are spoken: true unless the modalities leave audio out.
    public var speaksResponses: Bool {
        outputModalities.map { $0.contains(.audio) } ?? true
    }
}

/// The session object of `session.created` and `session.updated`: the server's identifiers
/// and the session's full, effective settings.
public struct RealtimeSessionInfo: Sendable, Hashable {
    /// The session id, `sess_…`.
    public var id: String
    /// The model name reported to GA clients (beta clients' SDK accepts only OpenAI's names,
    /// so the beta encoding leaves it out).
    public var model: String?
    /// When the session expires, in Unix seconds.
    public var expiresAt: Int?
    /// The effective settings; fields left `nil` are left out of the session object.
    public var settings: RealtimeSessionSettings

    /// Creates a session object.
    public init(id: String, model: String? = nil, expiresAt: Int? = nil, settings: RealtimeSessionSettings) {
        self.id = id
        self.model = model
        self.expiresAt = expiresAt
        self.settings = settings
    }
}
