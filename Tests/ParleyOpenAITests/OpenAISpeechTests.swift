import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyOpenAI

@Suite struct OpenAISpeechTests {
    static let fastRetry = OpenAIRetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20))

    static func configuration(_ server: FakeOpenAIServer, model: String, retry: OpenAIRetryPolicy = fastRetry) -> OpenAIConfiguration {
        OpenAIConfiguration(baseURL: server.baseURL, apiKey: "sk-speech", model: model, retry: retry)
    }

    static func tone(count: Int) -> [Float] {
        (0..<count).map { Float(sin(Double($0) * 0.05) * 0.5) }
    }

    // MARK: Recognition

    @Test func aPromptGivenWithTheCallReplacesTheRecognizersOwn() async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueTranscription(.text("Yeah."))
            server.enqueueTranscription(.text("Turn on the lights."))
            let recognizer = OpenAISpeechRecognizer(configuration: Self.configuration(server, model: "whisper-1"), prompt: "Parley")
            let samples = Self.tone(count: 16_000)
            let heard = try await openAITestDeadline { try await recognizer.transcribe(samples, isFinal: true, hints: TranscriptionHints(prompt: "Yeah. Stop.")) }
            #expect(heard.text == "Yeah.")
            _ = try await openAITestDeadline { try await recognizer.transcribe(samples, isFinal: true) }
            let prompts = server.requests.map { request in
                String(decoding: request.body, as: UTF8.self).contains("name=\"prompt\"\r\n\r\nYeah. Stop.\r\n")
            }
            #expect(prompts == [true, false])
            #expect(String(decoding: try #require(server.requests.last).body, as: UTF8.self).contains("name=\"prompt\"\r\n\r\nParley\r\n"))
        }
    }

    @Test func transcribesByUploadingAWAV() async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueTranscription(.text("  Turn on the lights.  "))
            let recognizer = OpenAISpeechRecognizer(configuration: Self.configuration(server, model: "whisper-1"), language: "en", prompt: "Parley")
            let samples = Self.tone(count: 16_000)
            let transcription = try await openAITestDeadline { try await recognizer.transcribe(samples, isFinal: true) }
            #expect(transcription.text == "Turn on the lights.")
            #expect(transcription.audioDuration == 1.0)

            let request = try #require(server.requests.first)
            #expect(request.path == "/v1/audio/transcriptions")
            #expect(request.headers["authorization"] == "Bearer sk-speech")
            let contentType = try #require(request.headers["content-type"])
            #expect(contentType.hasPrefix("multipart/form-data; boundary="))
            let body = String(decoding: request.body, as: UTF8.self)
            for field in [("model", "whisper-1"), ("language", "en"), ("prompt", "Parley"), ("response_format", "json")] {
                #expect(body.contains("Content-Disposition: form-data; name=\"\(field.0)\"\r\n\r\n\(field.1)\r\n"))
            }
            #expect(body.contains("name=\"file\"; filename=\"audio.wav\"\r\nContent-Type: audio/wav"))
            let wavStart = try #require(request.body.range(of: Data("RIFF".utf8)))
            let wav = request.body[wavStart.lowerBound...]
            #expect(wav.dropFirst(8).starts(with: Data("WAVEfmt ".utf8)))
            let dataSize = wav.dropFirst(40).prefix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            #expect(dataSize == samples.count * 2)
        }
    }

    @Test func acceptsAPlainTextAnswer() async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueTranscription(FakeTranscriptionScript(body: "hello there\n", contentType: "text/plain; charset=utf-8"))
            let recognizer = OpenAISpeechRecognizer(configuration: Self.configuration(server, model: "whisper-1"))
            let transcript = try await recognizer.transcribe(Self.tone(count: 800), isFinal: true).text
            #expect(transcript == "hello there")
        }
    }

    @Test func emptyAudioNeedsNoRequest() async throws {
        try await withFakeOpenAIServer { server in
            let recognizer = OpenAISpeechRecognizer(configuration: Self.configuration(server, model: "whisper-1"))
            let transcript = try await recognizer.transcribe([], isFinal: true).text
            #expect(transcript == "")
            #expect(server.requests.isEmpty)
        }
    }

    @Test(arguments: [
        (FakeTranscriptionScript.error(status: 401, message: "bad key"), ProviderError.Category.authentication),
        (.error(status: 429, message: "quota", code: "insufficient_quota"), .quotaExceeded),
        (.error(status: 400, message: "Audio file is too short"), .invalidRequest),
        (FakeTranscriptionScript(body: #"{"unexpected":true}"#), .server),
    ])
    func recognitionErrorsAreTyped(script: FakeTranscriptionScript, category: ProviderError.Category) async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueTranscription(script)
            let recognizer = OpenAISpeechRecognizer(configuration: Self.configuration(server, model: "whisper-1", retry: .none))
            await #expect { () async throws -> Void in
                _ = try await recognizer.transcribe(Self.tone(count: 1_600), isFinal: true)
            } throws: { error in
                (error as? ProviderError)?.category == category && (error as? ProviderError)?.provider == "openai-transcription"
            }
        }
    }

    @Test func recognitionRetriesServerErrors() async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueTranscription(.error(status: 502, message: "gateway"), .text("second time lucky"))
            let recognizer = OpenAISpeechRecognizer(configuration: Self.configuration(server, model: "whisper-1"))
            let transcript = try await recognizer.transcribe(Self.tone(count: 1_600), isFinal: true).text
            #expect(transcript == "second time lucky")
            #expect(server.requests.count == 2)
        }
    }

    @Test func recognitionTimesOut() async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueTranscription(.text("too late", delay: .seconds(2)))
            var configuration = Self.configuration(server, model: "whisper-1", retry: .none)
            configuration.timeouts = OpenAITimeouts(firstOutput: .milliseconds(200), idle: .seconds(5))
            let recognizer = OpenAISpeechRecognizer(configuration: configuration)
            await #expect { () async throws -> Void in
                _ = try await openAITestDeadline { try await recognizer.transcribe(Self.tone(count: 1_600), isFinal: true) }
            } throws: { error in
                (error as? ProviderError)?.category == .timeout
            }
        }
    }

    // MARK: Synthesis

    static func collect(_ stream: AsyncThrowingStream<[Int16], any Error>) async throws -> [[Int16]] {
        try await openAITestDeadline {
            var pieces: [[Int16]] = []
            for try await piece in stream { pieces.append(piece) }
            return pieces
        }
    }

    @Test(arguments: [1, 2, 3, 4_801, 100_000])
    func synthesisStreamsExactSamplesWhateverTheByteBoundaries(pieceBytes: Int) async throws {
        try await withFakeOpenAIServer { server in
            let samples: [Int16] = (0..<12_001).map { Int16(truncatingIfNeeded: $0 &* 7_919) }
            server.enqueueSpeech(.samples(samples, pieceBytes: pieceBytes))
            let synthesizer = OpenAISpeechSynthesizer(configuration: Self.configuration(server, model: "tts-1"), defaultVoice: "nova")
            #expect(synthesizer.sampleRate == 24_000)
            let pieces = try await Self.collect(synthesizer.synthesize("Hello there.", options: SpeechOptions(speed: 1.25)))
            #expect(pieces.flatMap { $0 } == samples)

            let body = try #require(server.requests.first?.json)
            #expect(server.requests.first?.path == "/v1/audio/speech")
            #expect(body == ["model": "tts-1", "input": "Hello there.", "voice": "nova", "response_format": "pcm", "speed": 1.25])
        }
    }

    @Test func aSpeechResponderAnswersFromTheTextAsked() async throws {
        try await withFakeOpenAIServer { server in
            server.setFallback(speech: .samples([1]))
            server.setSpeechResponder { request in
                let words = request["input"]?.stringValue?.split(separator: " ").count ?? 0
                return .samples([Int16](repeating: 7, count: words))
            }
            let synthesizer = OpenAISpeechSynthesizer(configuration: Self.configuration(server, model: "tts-1"))
            let threeWords = try await Self.collect(synthesizer.synthesize("One two three.", options: SpeechOptions()))
            #expect(threeWords.flatMap { $0 } == [7, 7, 7])
            server.setSpeechResponder(nil)
            let fallback = try await Self.collect(synthesizer.synthesize("One two three.", options: SpeechOptions()))
            #expect(fallback.flatMap { $0 } == [1])
        }
    }

    @Test func synthesisDeliversAudioBeforeTheBodyEnds() async throws {
        try await withFakeOpenAIServer { server in
            // 100 pieces 50 ms apart: the body takes 5 s, the first piece comes at once.
            let samples = [Int16](repeating: 1_000, count: 100_000)
            server.enqueueSpeech(FakeSpeechScript.samples(samples, pieceBytes: 2_000, interPieceDelay: .milliseconds(50)))
            let synthesizer = OpenAISpeechSynthesizer(configuration: Self.configuration(server, model: "tts-1"))
            let first = try await openAITestDeadline { () -> [Int16]? in
                var iterator = synthesizer.synthesize("Long text", options: SpeechOptions()).makeAsyncIterator()
                return try await iterator.next()
            }
            // A slow reader may get the pieces that arrived meanwhile in one go, never the whole body.
            let piece = try #require(first)
            #expect(!piece.isEmpty && piece.count < samples.count && piece.allSatisfy { $0 == 1_000 }, "first piece: \(piece.count) samples")
            try await openAITestDeadline { await server.waitForDisconnects(1) }
        }
    }

    @Test(arguments: [
        (FakeSpeechScript.error(status: 401, message: "bad key"), ProviderError.Category.authentication),
        (.error(status: 429, message: "slow down"), .rateLimited),
        (.error(status: 400, message: "voice not found"), .invalidRequest),
        (.error(status: 500, message: "boom"), .server),
        (FakeSpeechScript(body: Data([0xFF, 0xF3]), contentType: "audio/mpeg"), .invalidRequest),
    ])
    func synthesisErrorsAreTyped(script: FakeSpeechScript, category: ProviderError.Category) async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueSpeech(script)
            let synthesizer = OpenAISpeechSynthesizer(configuration: Self.configuration(server, model: "tts-1", retry: .none))
            await #expect { () async throws -> Void in
                _ = try await Self.collect(synthesizer.synthesize("Hi.", options: SpeechOptions()))
            } throws: { error in
                (error as? ProviderError)?.category == category && (error as? ProviderError)?.provider == "openai-speech"
            }
        }
    }

    @Test func synthesisRetriesOnlyBeforeTheFirstAudio() async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueSpeech(.error(status: 503, message: "busy"), .samples([1, 2, 3]))
            let synthesizer = OpenAISpeechSynthesizer(configuration: Self.configuration(server, model: "tts-1"))
            let samples = try await Self.collect(synthesizer.synthesize("Hi.", options: SpeechOptions())).flatMap { $0 }
            #expect(samples == [1, 2, 3])
            #expect(server.requests.count == 2)
        }
    }

    @Test func emptyTextNeedsNoRequest() async throws {
        try await withFakeOpenAIServer { server in
            let synthesizer = OpenAISpeechSynthesizer(configuration: Self.configuration(server, model: "tts-1"))
            let isSilent = try await Self.collect(synthesizer.synthesize("  ", options: SpeechOptions())).isEmpty
            #expect(isSilent)
            #expect(server.requests.isEmpty)
        }
    }

    @Test func pcmDecoderHandlesEverySplit() {
        let bytes: [UInt8] = [0x01, 0x02, 0xFF, 0x7F, 0x00, 0x80, 0x34, 0x12]
        let expected: [Int16] = [0x0201, 0x7FFF, Int16.min, 0x1234]
        for first in 0...bytes.count {
            for second in first...bytes.count {
                var decoder = PCM16StreamDecoder()
                let samples = decoder.push(Data(bytes[..<first])) + decoder.push(Data(bytes[first..<second])) + decoder.push(Data(bytes[second...]))
                #expect(samples == expected)
            }
        }
    }
}
