import Foundation

extension RealtimeSessionSettings {
    /// The full settings of a voice session, for `session.created` and `session.updated`.
    ///
    /// - Parameters:
    ///   - configuration: The session's configuration.
    ///   - inputTranscription: How the input is transcribed (the configuration does not say).
    ///   - inputAudioFormat: The format of the input audio on the wire.
    ///   - outputAudioFormat: The format of the output audio on the wire.
    public init(
        _ configuration: VoiceSessionConfiguration,
        inputTranscription: RealtimeInputTranscription = .enabled(model: nil, language: nil, prompt: nil),
        inputAudioFormat: RealtimeAudioFormat = .pcm16, outputAudioFormat: RealtimeAudioFormat = .pcm16
    ) {
        self.init(
            instructions: configuration.instructions,
            voice: configuration.speech.voice,
            speed: configuration.speech.speed,
            outputModalities: configuration.speaksResponses ? [.audio] : [.text],
            inputAudioFormat: inputAudioFormat,
            outputAudioFormat: outputAudioFormat,
            turnDetection: configuration.turnDetection.map { .serverVAD($0) } ?? .manual,
            inputTranscription: inputTranscription,
            tools: configuration.clientTools,
            toolChoice: configuration.toolChoice,
            temperature: configuration.temperature,
            maxOutputTokens: configuration.maxResponseTokens.map { .limited($0) } ?? .unlimited,
            noiseReduction: .some(configuration.noiseReduction)
        )
    }

    /// `configuration` with every setting these settings mention applied to it (the audio
    /// formats and the transcription model have no place there and are left to the caller).
    public func applied(to configuration: VoiceSessionConfiguration) -> VoiceSessionConfiguration {
        var configuration = configuration
        if let instructions { configuration.instructions = instructions }
        if let voice { configuration.speech.voice = voice }
        if let speed { configuration.speech.speed = speed }
        if outputModalities != nil { configuration.speaksResponses = speaksResponses }
        switch turnDetection {
        case .manual?: configuration.turnDetection = nil
        case .serverVAD(let vad)?: configuration.turnDetection = vad
        case nil: break
        }
        switch inputTranscription {
        case .enabled(_, let language, let prompt)?:
            configuration.transcription = TranscriptionHints(language: language.flatMap { $0.isEmpty ? nil : $0 }, prompt: prompt)
        case .disabled?: configuration.transcription = TranscriptionHints()
        case nil: break
        }
        if let tools { configuration.clientTools = tools }
        if let toolChoice { configuration.toolChoice = toolChoice }
        if let noiseReduction { configuration.noiseReduction = noiseReduction }
        if let echoCancellation { configuration.cancelsEcho = echoCancellation }
        if let interruption { configuration.interruption = interruption.applied(to: configuration.interruption) }
        if let temperature { configuration.temperature = temperature }
        switch maxOutputTokens {
        case .limited(let tokens)?: configuration.maxResponseTokens = tokens
        case .unlimited?: configuration.maxResponseTokens = nil
        case nil: break
        }
        return configuration
    }
}
