import Foundation

/// What the fake upstream answers and how fast: the same fixed costs for every system under test,
/// so a benchmark measures the framework and not the providers.
struct FakeUpstreamOptions: Sendable {
    /// The loopback port to bind; 0 picks a free one.
    var port = 0
    /// The text every transcription returns.
    var transcript = "What is the weather like in Paris today?"
    /// Delay before a transcription answers, in milliseconds.
    var transcriptionMs = 0
    /// The text every chat completion streams, one word per token.
    var reply = "It is sunny and mild in Paris today. Expect a light breeze this evening."
    /// Delay from the request to the first token, in milliseconds.
    var firstTokenMs = 0
    /// Tokens per second after the first one; 0 sends them all at once.
    var tokensPerSecond = 0.0
    /// Delay from a speech request to its first audio byte, in milliseconds.
    var speechFirstByteMs = 0
    /// Audio returned per speech request, in milliseconds, when `speechMsPerWord` is 0.
    var speechAudioMs = 1_000
    /// Audio returned per word of a speech request's text, in milliseconds (400 is 150 words a
    /// minute); 0 returns `speechAudioMs` whatever the text.
    var speechMsPerWord = 0
    /// Sample rate of the returned audio (raw PCM16, mono).
    var speechSampleRate = 24_000
    /// Size of the pieces the audio is streamed in, in milliseconds.
    var speechChunkMs = 40

    static let usage = """
    usage: FakeUpstream [options]

    FakeOpenAIServer as a process, for benchmarks: /v1/audio/transcriptions,
    /v1/chat/completions (streaming) and /v1/audio/speech (raw PCM) on 127.0.0.1, every
    request answered the same way after fixed delays. Prints "listening on http://127.0.0.1:PORT/v1".

    options:
      --port N                      port to bind, 0 for a free one (default 0)
      --transcript TEXT             what every transcription returns
      --transcription-ms N          delay before a transcription answers (default 0)
      --reply TEXT                  what every chat completion streams, a word per token
      --first-token-ms N            delay to the first token (default 0)
      --tokens-per-second N         token rate after the first, 0 = all at once (default 0)
      --speech-first-byte-ms N      delay to the first audio byte (default 0)
      --speech-audio-ms N           audio per speech request (default 1000)
      --speech-ms-per-word N        audio per word of the text instead, 0 = off (default 0)
      --speech-sample-rate N        sample rate of that audio (default 24000)
      --speech-chunk-ms N           size of the streamed audio pieces (default 40)
      --help                        show this help
    """

    /// Why the command line was refused.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses `arguments` (without the program name).
    /// - Throws: `UsageError` for an unknown option, a missing value or a value out of range.
    init(arguments: [String]) throws {
        var remaining = arguments[...]
        func value(for option: String) throws -> String {
            guard let next = remaining.popFirst() else { throw UsageError(description: "\(option) needs a value") }
            return next
        }
        func integer(for option: String, in range: ClosedRange<Int>) throws -> Int {
            let text = try value(for: option)
            guard let number = Int(text), range.contains(number) else {
                throw UsageError(description: "\(option): \"\(text)\" is not a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        while let option = remaining.popFirst() {
            switch option {
            case "--port": port = try integer(for: option, in: 0...65_535)
            case "--transcript": transcript = try value(for: option)
            case "--transcription-ms": transcriptionMs = try integer(for: option, in: 0...600_000)
            case "--reply": reply = try value(for: option)
            case "--first-token-ms": firstTokenMs = try integer(for: option, in: 0...600_000)
            case "--tokens-per-second": tokensPerSecond = Double(try integer(for: option, in: 0...1_000_000))
            case "--speech-first-byte-ms": speechFirstByteMs = try integer(for: option, in: 0...600_000)
            case "--speech-audio-ms": speechAudioMs = try integer(for: option, in: 1...600_000)
            case "--speech-ms-per-word": speechMsPerWord = try integer(for: option, in: 0...10_000)
            case "--speech-sample-rate": speechSampleRate = try integer(for: option, in: 8_000...48_000)
            case "--speech-chunk-ms": speechChunkMs = try integer(for: option, in: 1...10_000)
            default: throw UsageError(description: "unknown option \(option)")
            }
        }
        guard !reply.trimmingCharacters(in: .whitespaces).isEmpty else { throw UsageError(description: "--reply must not be empty") }
    }
}
