import Foundation
import ParleyCore
import ParleyNet

/// A `SpeechRecognizer` using an OpenAI-compatible `/audio/transcriptions` endpoint: the
/// utterance is uploaded as a 16-bit WAV in a multipart form and the text comes back as JSON.
///
/// ```swift
/// let recognizer = OpenAISpeechRecognizer(configuration: .init(apiKey: key, model: "whisper-1"))
/// let transcription = try await recognizer.transcribe(samples, isFinal: true)
/// ```
public struct OpenAISpeechRecognizer: SpeechRecognizer {
    /// The provider name in errors.
    public static let providerName = "openai-transcription"
    /// The largest transcription response accepted.
    static let maxResponseBytes = 1 << 20

    /// Where and how requests go; `model` is the transcription model, for example `whisper-1`.
    public let configuration: OpenAIConfiguration
    public let sampleRate: Int
    public let supportsPartials: Bool
    /// The spoken language as an ISO-639-1 code (`en`), or `nil` to let the model detect it.
    public let language: String?
    /// Text that guides the model (names, spelling), or `nil`.
    public let prompt: String?

    private let client: HTTPClient

    /// Creates a recognizer.
    /// - Parameters:
    ///   - configuration: base URL, key, model, headers, timeouts and retries.
    ///   - sampleRate: the rate of the samples passed to `transcribe`.
    ///   - language: the spoken language, or `nil` to detect it.
    ///   - prompt: text that guides the model.
    ///   - supportsPartials: whether callers may re-send growing utterances for partial transcripts
    ///     (each pass is a full upload, so it is off by default).
    ///   - client: the HTTP client to use.
    public init(
        configuration: OpenAIConfiguration,
        sampleRate: Int = 16_000,
        language: String? = nil,
        prompt: String? = nil,
        supportsPartials: Bool = false,
        client: HTTPClient = .shared
    ) {
        self.configuration = configuration
        self.sampleRate = sampleRate
        self.language = language
        self.prompt = prompt
        self.supportsPartials = supportsPartials
        self.client = client
    }

    public func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
        try await transcribe(samples, isFinal: isFinal, hints: TranscriptionHints())
    }

    /// Transcribes one utterance with the hints' `language` and `prompt` as the request's, in
    /// place of the ones the recognizer was made with (`nil`: those). The transcription's
    /// `language` is the one asked for, if any (a `json` response does not say).
    public func transcribe(_ samples: [Float], isFinal: Bool, hints: TranscriptionHints) async throws -> Transcription {
        let language = hints.language ?? self.language
        let prompt = hints.prompt ?? self.prompt
        let started = ContinuousClock.now
        let audioDuration = Double(samples.count) / Double(sampleRate)
        guard !samples.isEmpty else { return Transcription(text: "", audioDuration: 0, processingDuration: 0) }

        let wav = WAVFile.pcm16Data(samples: SampleConversion.pcm16(samples), format: AudioFormat(sampleRate: sampleRate))
        var form = MultipartFormData()
        form.add(name: "model", value: configuration.model)
        form.add(name: "response_format", value: "json")
        form.add(name: "temperature", value: "0")
        if let language, !language.isEmpty { form.add(name: "language", value: language) }
        if let prompt, !prompt.isEmpty { form.add(name: "prompt", value: prompt) }
        form.add(name: "file", filename: "audio.wav", contentType: "audio/wav", data: wav)

        let errors = OpenAIErrorMapper(provider: Self.providerName, configuration: configuration)
        let runner = OpenAIRequestRunner(configuration: configuration, errors: errors)
        let request = HTTPClient.Request(
            url: configuration.url("audio/transcriptions"),
            method: "POST",
            headers: configuration.headerFields(contentType: form.contentType, accept: "application/json"),
            body: form.finished(),
            idleTimeout: runner.transportTimeout
        )
        let client = client
        let text = try await runner.run { deadline in
            let response = try await client.stream(request)
            deadline.progressed()
            guard (200..<300).contains(response.status) else {
                throw errors.failure(status: response.status, headers: response.headers, body: try await response.bodyPrefix(64 << 10))
            }
            deadline.outputArrived()
            let body = try await response.collectBody(upTo: Self.maxResponseBytes)
            return try Self.text(of: body, contentType: response.headers["content-type"] ?? "", errors: errors)
        }
        return Transcription(
            text: text.trimmingCharacters(in: .whitespacesAndNewlines),
            audioDuration: audioDuration,
            processingDuration: (ContinuousClock.now - started).timeInterval,
            language: language.flatMap { $0.isEmpty ? nil : $0 }
        )
    }

    /// The transcript in a response: `{"text": …}`, or a plain-text body.
    static func text(of body: Data, contentType: String, errors: OpenAIErrorMapper) throws -> String {
        if let parsed = try? JSONSerialization.jsonObject(with: body, options: .fragmentsAllowed), let value = LenientJSON.value(parsed) {
            if let text = value["text"]?.stringValue { return text }
            if let detail = OpenAIErrorDetail(errorMember: value["error"]) { throw errors.failure(inStream: detail) }
        } else if contentType.hasPrefix("text/plain") {
            return String(decoding: body, as: UTF8.self)
        }
        throw OpenAIFailure(error: ProviderError(.server, provider: errors.provider, message: "the transcription response has no text"))
    }
}

