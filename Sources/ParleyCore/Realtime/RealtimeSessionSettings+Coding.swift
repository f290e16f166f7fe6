import Foundation

// The session object in both dialects.
//
// GA:   {type: "realtime", output_modalities, instructions, audio: {input: {format, transcription,
//        turn_detection, noise_reduction}, output: {format, voice, speed}}, tools, tool_choice,
//        max_output_tokens, model, …}
// beta: {modalities, instructions, voice, speed, input_audio_format: "pcm16", output_audio_format,
//        input_audio_transcription, turn_detection, tools, tool_choice, temperature,
//        max_response_output_tokens, …}
//
// Decoding reads the dialect's own spelling of each setting first and falls back to the other
// dialect's spelling, so a client that mixes them is understood; unknown fields are ignored.

extension RealtimeSessionSettings {
    /// Decodes the `session` object of a `session.update` (or of `session.created/updated`).
    init(decoding session: RealtimeJSONReader, dialect: RealtimeDialect) throws(RealtimeProtocolError) {
        self.init()
        // A conversation unless the object says otherwise (GA always names its type).
        var sessionType: RealtimeSessionType?
        if let type = try session.string("type") {
            guard let known = RealtimeSessionType(rawValue: type) else {
                throw .invalidValue(session.path(of: "type"), "expected 'realtime' or 'transcription', got \(quotedExcerpt(type)).")
            }
            sessionType = known == .transcription ? .transcription : nil
        }
        let audio = try session.object("audio")
        let audioInput = try audio?.object("input")
        let audioOutput = try audio?.object("output")

        let gaSettings = try Self.decodeGA(session: session, input: audioInput, output: audioOutput)
        let betaSettings = try Self.decodeBeta(session: session)
        self = dialect == .ga ? betaSettings.merging(gaSettings) : gaSettings.merging(betaSettings)

        instructions = try session.string("instructions")
        tools = try Self.decodeTools(session, allowingMCP: true)
        mcpServers = try Self.decodeMCPServers(session)
        toolChoice = try Self.decodeToolChoice(session, key: "tool_choice")
        temperature = try Self.decodeTemperature(session, key: "temperature")
        parleyEvents = try session.bool("parley_events")
        interruption = try Self.decodeInterruption(session)
        echoCancellation = try session.bool("parley_echo_cancellation")
        self.sessionType = sessionType
    }

    private static func decodeGA(
        session: RealtimeJSONReader, input: RealtimeJSONReader?, output: RealtimeJSONReader?
    ) throws(RealtimeProtocolError) -> RealtimeSessionSettings {
        var settings = RealtimeSessionSettings()
        settings.outputModalities = try decodeModalities(session, key: "output_modalities")
        settings.maxOutputTokens = try decodeTokenLimit(session, key: "max_output_tokens")
        if let input {
            settings.inputAudioFormat = try decodeGAFormat(input)
            if let transcription = input.member("transcription") {
                settings.inputTranscription = try decodeTranscription(transcription, path: input.path(of: "transcription"))
            }
            if let turnDetection = input.member("turn_detection") {
                settings.turnDetection = try decodeTurnDetection(turnDetection, path: input.path(of: "turn_detection"))
            }
            settings.noiseReduction = try decodeNoiseReduction(input, key: "noise_reduction")
        }
        if let output {
            settings.outputAudioFormat = try decodeGAFormat(output)
            settings.voice = try decodeVoice(output)
            settings.speed = try decodeSpeed(output)
        }
        return settings
    }

    private static func decodeBeta(session: RealtimeJSONReader) throws(RealtimeProtocolError) -> RealtimeSessionSettings {
        var settings = RealtimeSessionSettings()
        settings.outputModalities = try decodeModalities(session, key: "modalities")
        settings.maxOutputTokens = try decodeTokenLimit(session, key: "max_response_output_tokens")
        settings.inputAudioFormat = try decodeBetaFormat(session, key: "input_audio_format")
        settings.outputAudioFormat = try decodeBetaFormat(session, key: "output_audio_format")
        if let transcription = session.member("input_audio_transcription") {
            settings.inputTranscription = try decodeTranscription(
                transcription, path: session.path(of: "input_audio_transcription")
            )
        }
        if let turnDetection = session.member("turn_detection") {
            settings.turnDetection = try decodeTurnDetection(turnDetection, path: session.path(of: "turn_detection"))
        }
        settings.noiseReduction = try decodeNoiseReduction(session, key: "input_audio_noise_reduction")
        settings.voice = try decodeVoice(session)
        settings.speed = try decodeSpeed(session)
        return settings
    }

    // MARK: Fields

    /// Decodes a modality list, normalised: `[.audio]` when it names audio (speech always comes
    /// with its transcript), `[.text]` otherwise.
    static func decodeModalities(_ reader: RealtimeJSONReader, key: String) throws(RealtimeProtocolError) -> [RealtimeModality]? {
        guard let names = try reader.strings(key) else { return nil }
        var modalities: Set<RealtimeModality> = []
        for name in names {
            guard let modality = RealtimeModality(rawValue: name) else {
                throw .invalidValue(reader.path(of: key), "\(quotedExcerpt(name)) is not a modality; use 'text' or 'audio'.")
            }
            modalities.insert(modality)
        }
        guard !modalities.isEmpty else {
            throw .invalidValue(reader.path(of: key), "name at least one of 'text' and 'audio'.")
        }
        return modalities.contains(.audio) ? [.audio] : [.text]
    }

    static func decodeTokenLimit(_ reader: RealtimeJSONReader, key: String) throws(RealtimeProtocolError) -> RealtimeTokenLimit? {
        switch reader.member(key) {
        case nil, .null?: return nil
        case .string("inf")?: return .unlimited
        case .number?: return .limited(try reader.requiredInt(key, in: 1...Int(Int32.max)))
        case let other?: throw .invalidValue(reader.path(of: key), "expected an integer or 'inf', got \(other.kindName).")
        }
    }

    static func decodeTemperature(_ reader: RealtimeJSONReader, key: String) throws(RealtimeProtocolError) -> Double? {
        guard let temperature = try reader.double(key) else { return nil }
        guard (0...2).contains(temperature) else {
            throw .invalidValue(reader.path(of: key), "\(temperature) is outside 0…2.")
        }
        return temperature
    }

    /// The format of a GA `format` object: `{type: "audio/pcm", rate: 24000}`, `{type: "audio/pcmu"}`
    /// or `{type: "audio/pcma"}`.
    private static func decodeGAFormat(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> RealtimeAudioFormat? {
        guard let format = try reader.object("format") else { return nil }
        let type = try format.string("type") ?? "audio/pcm"
        guard let decoded = RealtimeAudioFormat.allCases.first(where: { $0.gaName == type }) else {
            throw .unsupported(format.path(of: "type"), "\(quotedExcerpt(type)) is not supported; use 'audio/pcm' at 24000 Hz, 'audio/pcmu' or 'audio/pcma'.")
        }
        let rate = try format.int("rate", in: 0...Int(Int32.max)) ?? decoded.sampleRate
        guard rate == decoded.sampleRate else {
            throw .unsupported(format.path(of: "rate"), "\(rate) Hz is not supported for \(type); use \(decoded.sampleRate).")
        }
        return decoded
    }

    /// The format of a beta format name: `pcm16` (24 kHz), `g711_ulaw` or `g711_alaw`.
    private static func decodeBetaFormat(_ reader: RealtimeJSONReader, key: String) throws(RealtimeProtocolError) -> RealtimeAudioFormat? {
        guard let name = try reader.string(key) else { return nil }
        guard let format = RealtimeAudioFormat.allCases.first(where: { $0.betaName == name }) else {
            throw .unsupported(reader.path(of: key), "\(quotedExcerpt(name)) is not supported; use 'pcm16' (24 kHz), 'g711_ulaw' or 'g711_alaw'.")
        }
        return format
    }

    private static func decodeVoice(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> String? {
        let voice: String?
        if case .object? = reader.member("voice") {
            voice = try reader.requiredObject("voice").requiredString("id")
        } else {
            voice = try reader.string("voice")
        }
        if let voice, voice.isEmpty { throw .invalidValue(reader.path(of: "voice"), "the voice name is empty.") }
        return voice
    }

    private static func decodeSpeed(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> Double? {
        guard let speed = try reader.double("speed") else { return nil }
        guard (0.25...1.5).contains(speed) else {
            throw .invalidValue(reader.path(of: "speed"), "\(speed) is outside 0.25…1.5.")
        }
        return speed
    }

    /// Decodes `noise_reduction` (beta `input_audio_noise_reduction`): `null` is off, an object
    /// names its `type`; `nil` when not mentioned.
    private static func decodeNoiseReduction(_ reader: RealtimeJSONReader, key: String) throws(RealtimeProtocolError) -> NoiseReduction?? {
        guard let value = reader.member(key) else { return nil }
        if value == .null { return .some(nil) }
        let object = try RealtimeJSONReader(value, path: reader.path(of: key))
        let type = try object.string("type") ?? ""
        guard let kind = NoiseReduction(rawValue: type) else {
            throw .invalidValue(object.path(of: "type"), "\(quotedExcerpt(type)) is not a noise reduction type; use 'near_field', 'far_field', or null for none.")
        }
        return .some(kind)
    }

    /// Decodes Parley's `parley_interruption` object.
    private static func decodeInterruption(_ session: RealtimeJSONReader) throws(RealtimeProtocolError) -> InterruptionSettings? {
        guard let reader = try session.object("parley_interruption") else { return nil }
        let settings = InterruptionSettings(
            minimumSpeechMs: try reader.int("min_speech_ms"), maximumBackchannelMs: try reader.int("max_backchannel_ms"),
            gapToleranceMs: try reader.int("gap_tolerance_ms"), minimumVoicedMs: try reader.int("min_voiced_ms"),
            threshold: try reader.double("threshold"),
            playbackThreshold: try reader.double("playback_threshold"), backchannels: try reader.strings("backchannels"),
            minimumWordConfidence: try reader.double("min_word_confidence")
        )
        if let first = settings.validationProblems().first { throw .invalidValue(reader.path(of: first.field), first.problem) }
        return settings
    }

    private static func decodeTranscription(_ value: JSONValue, path: String) throws(RealtimeProtocolError) -> RealtimeInputTranscription {
        if value == .null { return .disabled }
        let reader = try RealtimeJSONReader(value, path: path)
        return .enabled(
            model: try reader.string("model"), language: try reader.string("language"), prompt: try reader.string("prompt")
        )
    }

    /// Decodes a turn detection value: `null` is manual, `server_vad` keeps its parameters,
    /// `semantic_vad` keeps its eagerness (default `auto`) and its two response flags.
    static func decodeTurnDetection(_ value: JSONValue, path: String) throws(RealtimeProtocolError) -> RealtimeTurnDetection {
        if value == .null { return .manual }
        let reader = try RealtimeJSONReader(value, path: path)
        let defaults = ServerVADSettings()
        var settings = defaults
        settings.createResponse = try reader.bool("create_response") ?? defaults.createResponse
        settings.interruptResponse = try reader.bool("interrupt_response") ?? defaults.interruptResponse
        switch try reader.string("type") ?? "server_vad" {
        case "server_vad":
            if let threshold = try reader.double("threshold") {
                guard (0...1).contains(threshold) else {
                    throw .invalidValue(reader.path(of: "threshold"), "\(threshold) is outside 0…1.")
                }
                settings.threshold = threshold
            }
            settings.prefixPaddingMs = try reader.int("prefix_padding_ms", in: 0...60_000) ?? defaults.prefixPaddingMs
            settings.silenceDurationMs = try reader.int("silence_duration_ms", in: 0...60_000) ?? defaults.silenceDurationMs
            settings.idleTimeoutMs = try reader.int("idle_timeout_ms", in: 0...Int(Int32.max))
        case "semantic_vad":
            let eagerness = try reader.string("eagerness") ?? "auto"
            guard let value = ServerVADSettings.Eagerness(rawValue: eagerness) else {
                throw .invalidValue(reader.path(of: "eagerness"), "\(quotedExcerpt(eagerness)) is not an eagerness; use 'low', 'medium', 'high' or 'auto'.")
            }
            settings.eagerness = value
        case let other:
            throw .invalidValue(reader.path(of: "type"), "\(quotedExcerpt(other)) is not a turn detection type; use 'server_vad', 'semantic_vad' or null.")
        }
        return .serverVAD(settings)
    }

    /// Decodes the `tools` array, `nil` when absent.
    /// `allowingMCP` skips `mcp` entries (`decodeMCPServers` reads them) instead of refusing them.
    static func decodeTools(_ reader: RealtimeJSONReader, allowingMCP: Bool = false) throws(RealtimeProtocolError) -> [ToolDefinition]? {
        guard let readers = try reader.objects("tools") else { return nil }
        var tools: [ToolDefinition] = []
        for toolReader in readers {
            if allowingMCP, try toolReader.string("type") == "mcp" { continue }
            tools.append(try decodeTool(toolReader))
        }
        return tools
    }

    /// Decodes one function tool: `{type: "function", name, description, parameters}`.
    static func decodeTool(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> ToolDefinition {
        let type = try reader.string("type") ?? "function"
        guard type == "function" else {
            throw .unsupported(reader.path(of: "type"), "\(quotedExcerpt(type)) tools are not supported; use 'function'.")
        }
        let name = try reader.requiredString("name")
        let isValidName = (1...64).contains(name.utf8.count) && name.utf8.allSatisfy {
            ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
        guard isValidName else {
            throw .invalidValue(reader.path(of: "name"), "\(quotedExcerpt(name)) must be 1–64 letters, digits, '_' or '-'.")
        }
        let parameters: JSONValue
        switch reader.member("parameters") {
        case nil, .null?: parameters = .object(["type": .string("object"), "properties": .object([:])])
        case .object(let schema)?: parameters = .object(schema)
        case let other?: throw .invalidValue(reader.path(of: "parameters"), "expected a JSON Schema object, got \(other.kindName).")
        }
        return ToolDefinition(name: name, description: try reader.string("description") ?? "", parameters: parameters)
    }

    /// Decodes `auto`, `none`, `required`, a function's name (beta) or `{type: "function", name}`.
    static func decodeToolChoice(_ reader: RealtimeJSONReader, key: String) throws(RealtimeProtocolError) -> ToolChoice? {
        switch reader.member(key) {
        case nil, .null?: return nil
        case .string("auto")?: return .auto
        case .string("none")?: return ToolChoice.none
        case .string("required")?: return .required
        case .string(let name)?: return .function(name)
        case .object?:
            let choice = try reader.requiredObject(key)
            let type = try choice.requiredString("type")
            guard type == "function" else {
                throw .unsupported(choice.path(of: "type"), "\(quotedExcerpt(type)) tool choices are not supported; use 'function'.")
            }
            return .function(try choice.requiredString("name"))
        case let other?: throw .invalidValue(reader.path(of: key), "expected a string or an object, got \(other.kindName).")
        }
    }
}

// MARK: - Encoding

extension RealtimeSessionSettings {
    /// Writes the mentioned settings as members of a session object in `dialect`.
    func write(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        switch dialect {
        case .ga: writeGA(to: &writer)
        case .beta: writeBeta(to: &writer)
        }
    }

    private func writeGA(to writer: inout RealtimeJSONWriter) {
        if let outputModalities { writer.field("output_modalities", Self.modalityNames(outputModalities, dialect: .ga)) }
        writer.field("instructions", ifPresent: instructions)
        let mentionsInput = inputAudioFormat != nil || inputTranscription != nil || turnDetection != nil || noiseReduction != nil
        let mentionsOutput = outputAudioFormat != nil || voice != nil || speed != nil
        if mentionsInput || mentionsOutput {
            writer.object("audio") { audio in
                if mentionsInput {
                    audio.object("input") { input in
                        if let inputAudioFormat { input.object("format") { Self.writeGAFormat(inputAudioFormat, to: &$0) } }
                        if let inputTranscription { Self.writeTranscription(inputTranscription, key: "transcription", to: &input) }
                        if let turnDetection { Self.writeTurnDetection(turnDetection, dialect: .ga, to: &input) }
                        if let noiseReduction { Self.writeNoiseReduction(noiseReduction, key: "noise_reduction", to: &input) }
                    }
                }
                if mentionsOutput {
                    audio.object("output") { output in
                        if let outputAudioFormat { output.object("format") { Self.writeGAFormat(outputAudioFormat, to: &$0) } }
                        output.field("voice", ifPresent: voice)
                        output.field("speed", ifPresent: speed)
                    }
                }
            }
        }
        writeCommon(to: &writer, dialect: .ga)
        if let maxOutputTokens { Self.writeTokenLimit(maxOutputTokens, key: "max_output_tokens", to: &writer) }
    }

    private func writeBeta(to writer: inout RealtimeJSONWriter) {
        if let outputModalities { writer.field("modalities", Self.modalityNames(outputModalities, dialect: .beta)) }
        writer.field("instructions", ifPresent: instructions)
        writer.field("voice", ifPresent: voice)
        writer.field("speed", ifPresent: speed)
        writer.field("input_audio_format", ifPresent: inputAudioFormat?.betaName)
        writer.field("output_audio_format", ifPresent: outputAudioFormat?.betaName)
        if let inputTranscription { Self.writeTranscription(inputTranscription, key: "input_audio_transcription", to: &writer) }
        if let turnDetection { Self.writeTurnDetection(turnDetection, dialect: .beta, to: &writer) }
        if let noiseReduction { Self.writeNoiseReduction(noiseReduction, key: "input_audio_noise_reduction", to: &writer) }
        writeCommon(to: &writer, dialect: .beta)
        writer.field("temperature", ifPresent: temperature)
        if let maxOutputTokens { Self.writeTokenLimit(maxOutputTokens, key: "max_response_output_tokens", to: &writer) }
    }

    private func writeCommon(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        // The beta API has no MCP tools.
        let mcpServers = dialect == .ga ? mcpServers : nil
        if tools != nil || mcpServers != nil { Self.writeTools(tools ?? [], mcpServers: mcpServers ?? [], to: &writer) }
        if let toolChoice { Self.writeToolChoice(toolChoice, dialect: dialect, to: &writer) }
    }

    /// GA speaks with `["audio"]` (transcripts included) or writes `["text"]`; beta lists
    /// `["text", "audio"]` for speech.
    static func modalityNames(_ modalities: [RealtimeModality], dialect: RealtimeDialect) -> [String] {
        let speaks = modalities.contains(.audio)
        switch dialect {
        case .ga: return speaks ? ["audio"] : ["text"]
        case .beta: return speaks ? ["text", "audio"] : ["text"]
        }
    }

    static func writeGAFormat(_ format: RealtimeAudioFormat, to writer: inout RealtimeJSONWriter) {
        writer.field("type", format.gaName)
        if format == .pcm16 { writer.field("rate", format.sampleRate) }
    }

    private static func writeTranscription(_ transcription: RealtimeInputTranscription, key: String, to writer: inout RealtimeJSONWriter) {
        switch transcription {
        case .disabled:
            writer.nullField(key)
        case .enabled(let model, let language, let prompt):
            writer.object(key) { object in
                object.field("model", ifPresent: model)
                object.field("language", ifPresent: language)
                object.field("prompt", ifPresent: prompt)
            }
        }
    }

    private static func writeNoiseReduction(_ noiseReduction: NoiseReduction?, key: String, to writer: inout RealtimeJSONWriter) {
        guard let noiseReduction else { return writer.nullField(key) }
        writer.object(key) { $0.field("type", noiseReduction.rawValue) }
    }

    private static func writeTurnDetection(_ turnDetection: RealtimeTurnDetection, dialect: RealtimeDialect, to writer: inout RealtimeJSONWriter) {
        switch turnDetection {
        case .manual:
            writer.nullField("turn_detection")
        case .serverVAD(let vad) where vad.eagerness != nil:
            writer.object("turn_detection") { object in
                object.field("type", "semantic_vad")
                object.field("eagerness", vad.eagerness?.rawValue ?? "auto")
                object.field("create_response", vad.createResponse)
                object.field("interrupt_response", vad.interruptResponse)
            }
        case .serverVAD(let vad):
            writer.object("turn_detection") { object in
                object.field("type", "server_vad")
                object.field("threshold", vad.threshold)
                object.field("prefix_padding_ms", vad.prefixPaddingMs)
                object.field("silence_duration_ms", vad.silenceDurationMs)
                if dialect == .ga {
                    if let idle = vad.idleTimeoutMs { object.field("idle_timeout_ms", idle) } else { object.nullField("idle_timeout_ms") }
                }
                object.field("create_response", vad.createResponse)
                object.field("interrupt_response", vad.interruptResponse)
            }
        }
    }

    static func writeTools(_ tools: [ToolDefinition], mcpServers: [MCPServerConfiguration] = [], to writer: inout RealtimeJSONWriter) {
        writer.array("tools") { array in
            for tool in tools {
                array.elementObject { object in
                    object.field("type", "function")
                    object.field("name", tool.name)
                    object.field("description", tool.description)
                    object.field("parameters", tool.parameters)
                }
            }
            for server in mcpServers {
                array.elementObject { server.write(to: &$0) }
            }
        }
    }

    /// Writes `tool_choice`: a mode name, or a function as `{type: "function", name}` in GA and
    /// as its bare name in beta (the beta API takes only strings there).
    static func writeToolChoice(_ choice: ToolChoice, dialect: RealtimeDialect, to writer: inout RealtimeJSONWriter) {
        switch choice {
        case .auto: writer.field("tool_choice", "auto")
        case .none: writer.field("tool_choice", "none")
        case .required: writer.field("tool_choice", "required")
        case .function(let name) where dialect == .beta: writer.field("tool_choice", name)
        case .function(let name):
            writer.object("tool_choice") { object in
                object.field("type", "function")
                object.field("name", name)
            }
        }
    }

    static func writeTokenLimit(_ limit: RealtimeTokenLimit, key: String, to writer: inout RealtimeJSONWriter) {
        switch limit {
        case .limited(let tokens): writer.field(key, tokens)
        case .unlimited: writer.field(key, "inf")
        }
    }
}

extension RealtimeSessionInfo {
    /// Writes the full session object of `session.created` / `session.updated`.
    func write(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        if settings.sessionType == .transcription {
            writeTranscriptionSession(to: &writer, dialect: dialect)
            return
        }
        if dialect == .ga { writer.field("type", "realtime") }
        writer.field("object", "realtime.session")
        writer.field("id", id)
        if dialect == .ga { writer.field("model", ifPresent: model) }
        writer.field("expires_at", ifPresent: expiresAt)
        settings.write(to: &writer, dialect: dialect)
    }

    /// A transcription session: GA `{type: "transcription", audio: {input: …}}`, beta
    /// `{input_audio_format, input_audio_transcription, turn_detection, …}` (whose required
    /// `client_secret` is left empty: the session's own credential is never sent back).
    private func writeTranscriptionSession(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        var input = settings
        input.instructions = nil
        input.voice = nil
        input.speed = nil
        input.outputAudioFormat = nil
        input.outputModalities = nil
        input.tools = nil
        input.toolChoice = nil
        input.temperature = nil
        input.maxOutputTokens = nil
        switch dialect {
        case .ga:
            writer.field("type", "transcription")
            writer.field("object", "realtime.transcription_session")
            writer.field("id", id)
            writer.field("expires_at", ifPresent: expiresAt)
            input.write(to: &writer, dialect: .ga)
        case .beta:
            writer.field("object", "realtime.transcription_session")
            writer.field("id", id)
            writer.object("client_secret") { secret in
                secret.field("value", "")
                secret.field("expires_at", expiresAt ?? 0)
            }
            writer.field("modalities", ["text"])
            input.write(to: &writer, dialect: .beta)
        }
    }

    /// Decodes a session object of either dialect.
    init(decoding reader: RealtimeJSONReader) throws(RealtimeProtocolError) {
        let dialect: RealtimeDialect = reader.contains("audio") || reader.contains("output_modalities") ? .ga : .beta
        self.init(
            id: try reader.string("id") ?? "",
            model: try reader.string("model"),
            expiresAt: try reader.int("expires_at", in: 0...Int.max),
            settings: try RealtimeSessionSettings(decoding: reader, dialect: dialect)
        )
    }
}
