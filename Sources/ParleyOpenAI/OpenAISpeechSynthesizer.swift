import Foundation
import ParleyCore
import ParleyNet

/// A `SpeechSynthesizer` using an OpenAI-compatible `/audio/speech` endpoint with
/// `response_format: pcm` (24 kHz, 16-bit little-endian, mono), streaming audio as it arrives.
///
/// ```swift
/// let synthesizer = OpenAISpeechSynthesizer(configuration: .init(apiKey: key, model: "tts-1"))
/// for try await samples in synthesizer.synthesize("Hello!", options: SpeechOptions(voice: "alloy")) { play(samples) }
/// ```
public struct OpenAISpeechSynthesizer: SpeechSynthesizer {
    /// The provider name in errors.
    public static let providerName = "openai-speech"

    /// Where and how requests go; `model` is the speech model, for example `tts-1`.
    public let configuration: OpenAIConfiguration
    public let sampleRate: Int
    /// The voice used when the options name none.
    public let defaultVoice: String

    private let client: HTTPClient

    /// Creates a synthesizer.
    /// - Parameters:
    ///   - configuration: base URL, key, model, headers, timeouts and retries.
    ///   - defaultVoice: the voice when `SpeechOptions.voice` is `nil`.
    ///   - sampleRate: the rate of the server's raw PCM (24 kHz for OpenAI).
    ///   - client: the HTTP client to use.
    public init(configuration: OpenAIConfiguration, defaultVoice: String = "alloy", sampleRate: Int = 24_000, client: HTTPClient = .shared) {
        self.configuration = configuration
        self.defaultVoice = defaultVoice
        self.sampleRate = sampleRate
        self.client = client
    }

    public func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        // Audio arrives at network speed and is played in real time; a sentence's audio may queue here.
        let (audio, continuation) = AsyncThrowingStream.makeStream(of: [Int16].self, bufferingPolicy: .unbounded)
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            continuation.finish()
            return audio
        }
        let errors = OpenAIErrorMapper(provider: Self.providerName, configuration: configuration)
        let runner = OpenAIRequestRunner(configuration: configuration, errors: errors)
        let body: JSONValue = [
            "model": .string(configuration.model),
            "input": .string(text),
            "voice": .string(options.voice ?? defaultVoice),
            "response_format": "pcm",
            "speed": .number(options.speed),
        ]
        let request = HTTPClient.Request(
            url: configuration.url("audio/speech"),
            method: "POST",
            headers: configuration.headerFields(contentType: "application/json", accept: "audio/pcm, application/octet-stream"),
            body: Data(body.jsonText.utf8),
            idleTimeout: runner.transportTimeout
        )
        let client = client
        let progressSamples = Self.progressSamples(sampleRate: sampleRate)
        let task = Task {
            do {
                try await runner.run { deadline in
                    let response = try await client.stream(request)
                    deadline.progressed()
                    guard (200..<300).contains(response.status) else {
                        throw errors.failure(status: response.status, headers: response.headers, body: try await response.bodyPrefix(64 << 10))
                    }
                    try Self.checkRawPCM(contentType: response.headers["content-type"], errors: errors)
                    var decoder = PCM16StreamDecoder()
                    var samplesSinceProgress = 0
                    for try await piece in response.body {
                        let samples = decoder.push(piece)
                        if !samples.isEmpty {
                            continuation.yield(samples)
                            deadline.markDelivered()
                            samplesSinceProgress += samples.count
                        }
                        // Bytes alone are no progress: a server trickling a byte at a time would hold the response open.
                        if samplesSinceProgress >= progressSamples {
                            deadline.progressed()
                            samplesSinceProgress = 0
                        }
                    }
                }
                continuation.finish()
            } catch let error as ProviderError {
                continuation.finish(throwing: error)
            } catch {
                continuation.finish(throwing: ProviderError(.cancelled, provider: Self.providerName, message: "synthesis was cancelled"))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return audio
    }

    /// The audio that renews the idle deadline: 20 ms. Less than that per idle period is a stalled stream.
    static func progressSamples(sampleRate: Int) -> Int { max(1, sampleRate / 50) }

    /// Refuses bodies that are clearly not raw PCM (a server that ignored `response_format`).
    static func checkRawPCM(contentType: String?, errors: OpenAIErrorMapper) throws {
        guard let contentType = contentType?.lowercased() else { return }
        let compressed = ["json", "mpeg", "mp3", "ogg", "opus", "aac", "flac", "wav", "webm", "html"]
        if compressed.contains(where: contentType.contains) {
            throw OpenAIFailure(error: ProviderError(
                .invalidRequest,
                provider: errors.provider,
                message: "the server answered with \(contentType) instead of raw PCM; it may not support response_format pcm"
            ))
        }
    }
}

/// Turns a byte stream of 16-bit little-endian samples into samples, whatever the byte boundaries.
struct PCM16StreamDecoder {
    private var pendingByte: UInt8?

    /// The complete samples in `bytes` plus any byte left over from the previous piece.
    mutating func push(_ bytes: Data) -> [Int16] {
        guard !bytes.isEmpty else { return [] }
        return bytes.withUnsafeBytes { raw in
            let count = (raw.count + (pendingByte == nil ? 0 : 1)) / 2
            var index = 0
            let samples = [Int16](unsafeUninitializedCapacity: count) { buffer, initialized in
                var written = 0
                if let low = pendingByte, count > 0 {
                    buffer[0] = Int16(bitPattern: UInt16(low) | UInt16(raw[0]) << 8)
                    written = 1
                    index = 1
                }
                while written < count {
                    buffer[written] = Int16(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: Int16.self))
                    written += 1
                    index += 2
                }
                initialized = count
            }
            pendingByte = index < raw.count ? raw[index] : nil
            return samples
        }
    }
}
