import Foundation
import ParleyCore
import ParleyNet

/// The three OpenAI-compatible endpoints of the fake upstream, with the fixed delays of its
/// options, and `GET /stats` with the number of requests each one served.
struct FakeUpstreamRoutes: Sendable {
    let options: FakeUpstreamOptions
    /// Raw PCM16 little-endian audio returned by every speech request.
    let speechAudio: Data
    let counters = RequestCounters()

    init(options: FakeUpstreamOptions) {
        self.options = options
        speechAudio = Self.tone(milliseconds: options.speechAudioMs, sampleRate: options.speechSampleRate)
    }

    /// A router serving the endpoints under `/v1`.
    func router() -> Router {
        var router = Router()
        let routes = self
        router.post("/v1/audio/transcriptions") { request in await routes.transcribe(request) }
        router.post("/v1/chat/completions") { request in routes.complete(request) }
        router.post("/v1/audio/speech") { request in routes.speak(request) }
        router.get("/stats") { _ in .json(routes.counters.snapshot) }
        return router
    }

    private func transcribe(_ request: HTTPRequest) async -> HTTPResponse {
        counters.count("transcriptions")
        guard !request.body.isEmpty else {
            return .error(status: 400, code: "invalid_request", message: "the request has no audio file")
        }
        if options.transcriptionMs > 0 { try? await Task.sleep(for: .milliseconds(options.transcriptionMs)) }
        return .json(["text": options.transcript])
    }

    private func complete(_ request: HTTPRequest) -> HTTPResponse {
        counters.count("chat_completions")
        let body = (try? JSONValue(parsing: String(decoding: request.body, as: UTF8.self))) ?? .null
        let model = body["model"]?.stringValue ?? "fake"
        let words = options.reply.split(separator: " ").map(String.init)
        let tokens = words.enumerated().map { $0.offset == 0 ? $0.element : " " + $0.element }
        guard body["stream"]?.boolValue == true else {
            return .json(ChatCompletion(model: model, content: options.reply, completionTokens: tokens.count))
        }
        let includeUsage = body["stream_options"]?["include_usage"]?.boolValue == true
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self, bufferingPolicy: .unbounded)
        let options = options
        let producer = Task {
            do {
                if options.firstTokenMs > 0 { try await Task.sleep(for: .milliseconds(options.firstTokenMs)) }
                for (index, token) in tokens.enumerated() {
                    if index > 0, options.tokensPerSecond > 0 { try await Task.sleep(for: .seconds(1 / options.tokensPerSecond)) }
                    let delta: JSONValue = index == 0 ? ["role": "assistant", "content": .string(token)] : ["content": .string(token)]
                    continuation.yield(Self.event(Self.chunk(model: model, delta: delta, finishReason: .null)))
                }
                continuation.yield(Self.event(Self.chunk(model: model, delta: [:], finishReason: "stop")))
                if includeUsage {
                    let usage: JSONValue = [
                        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": .string(model),
                        "choices": [], "usage": ["prompt_tokens": 10, "completion_tokens": .number(Double(tokens.count)), "total_tokens": .number(Double(10 + tokens.count))],
                    ]
                    continuation.yield(Self.event(usage))
                }
                continuation.yield(Data("data: [DONE]\n\n".utf8))
            } catch {
                // The client went away; the stream is finished below.
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in producer.cancel() }
        return .serverSentEvents(stream)
    }

    private func speak(_ request: HTTPRequest) -> HTTPResponse {
        counters.count("speech")
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self, bufferingPolicy: .unbounded)
        let options = options
        let audio = speechAudio
        let producer = Task {
            if options.speechFirstByteMs > 0 { try? await Task.sleep(for: .milliseconds(options.speechFirstByteMs)) }
            let chunkBytes = max(2, options.speechSampleRate * options.speechChunkMs / 1000 * 2)
            var start = 0
            while start < audio.count, !Task.isCancelled {
                let end = min(start + chunkBytes, audio.count)
                continuation.yield(audio.subdata(in: start..<end))
                start = end
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in producer.cancel() }
        return HTTPResponse(status: 200, headers: ["Content-Type": "audio/pcm"], body: .stream(stream))
    }

    /// One chat completion chunk.
    private static func chunk(model: String, delta: JSONValue, finishReason: JSONValue) -> JSONValue {
        [
            "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": .string(model),
            "choices": [["index": 0, "delta": delta, "finish_reason": finishReason]],
        ]
    }

    /// `value` framed as one Server-Sent Event.
    private static func event(_ value: JSONValue) -> Data {
        Data("data: \(value.jsonText)\n\n".utf8)
    }

    /// A quiet 220 Hz tone: audible, so nothing downstream mistakes it for silence.
    private static func tone(milliseconds: Int, sampleRate: Int) -> Data {
        let count = milliseconds * sampleRate / 1000
        var data = Data(capacity: count * 2)
        for index in 0..<count {
            let sample = Int16(6_000 * sin(2 * Double.pi * 220 * Double(index) / Double(sampleRate)))
            withUnsafeBytes(of: sample.littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }
}

/// A non-streamed chat completion.
private struct ChatCompletion: Encodable {
    struct Choice: Encodable {
        struct Message: Encodable {
            var role = "assistant"
            var content: String
        }
        var index = 0
        var message: Message
        var finish_reason = "stop"
    }
    struct Usage: Encodable {
        var prompt_tokens = 10
        var completion_tokens: Int
        var total_tokens: Int
    }
    var id = "chatcmpl-fake"
    var object = "chat.completion"
    var created = 0
    var model: String
    var choices: [Choice]
    var usage: Usage

    init(model: String, content: String, completionTokens: Int) {
        self.model = model
        choices = [Choice(message: .init(content: content))]
        usage = Usage(completion_tokens: completionTokens, total_tokens: 10 + completionTokens)
    }
}

/// Requests served per endpoint.
///
/// `@unchecked Sendable`: `counts` is guarded by `lock`.
final class RequestCounters: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = ["transcriptions": 0, "chat_completions": 0, "speech": 0]

    /// Counts one request to `endpoint`.
    func count(_ endpoint: String) { lock.withLock { counts[endpoint, default: 0] += 1 } }

    /// The counts so far.
    var snapshot: [String: Int] { lock.withLock { counts } }
}
