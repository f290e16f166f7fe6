import Foundation
import ParleyCore
import ParleyNet

/// The scripts, recordings and waiters of a `FakeOpenAIServer`, shared with its handlers.
final class FakeOpenAIServerState: Sendable {
    struct Contents {
        var chat: [FakeChatScript] = []
        var transcription: [FakeTranscriptionScript] = []
        var speech: [FakeSpeechScript] = []
        var chatFallback: FakeChatScript?
        var chatResponder: (@Sendable (JSONValue) -> FakeChatScript)?
        var transcriptionFallback: FakeTranscriptionScript?
        var speechFallback: FakeSpeechScript?
        var speechResponder: (@Sendable (JSONValue) -> FakeSpeechScript)?
        var requests: [FakeOpenAIServer.RecordedRequest] = []
        var disconnects = 0
        var firstChunkInstants: [ContinuousClock.Instant] = []
        var waiters: [(id: UUID, condition: @Sendable (Contents) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let contents = FakeOpenAIServerLock(Contents())

    func enqueue(chat: [FakeChatScript]) { contents.withLock { $0.chat += chat } }
    func enqueue(transcription: [FakeTranscriptionScript]) { contents.withLock { $0.transcription += transcription } }
    func enqueue(speech: [FakeSpeechScript]) { contents.withLock { $0.speech += speech } }

    func setFallback(chat: FakeChatScript?, transcription: FakeTranscriptionScript?, speech: FakeSpeechScript?) {
        contents.withLock {
            $0.chatFallback = chat
            $0.transcriptionFallback = transcription
            $0.speechFallback = speech
        }
    }

    func setChatResponder(_ responder: (@Sendable (JSONValue) -> FakeChatScript)?) {
        contents.withLock { $0.chatResponder = responder }
    }

    func setSpeechResponder(_ responder: (@Sendable (JSONValue) -> FakeSpeechScript)?) {
        contents.withLock { $0.speechResponder = responder }
    }

    var recordedRequests: [FakeOpenAIServer.RecordedRequest] { contents.withLock { $0.requests } }
    var disconnectCount: Int { contents.withLock { $0.disconnects } }
    var firstChunkInstants: [ContinuousClock.Instant] { contents.withLock { $0.firstChunkInstants } }

    /// Waits until `condition` holds for the contents, or the task is cancelled.
    func waitUntil(_ condition: @escaping @Sendable (Contents) -> Bool) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let satisfied = contents.withLock { contents -> Bool in
                    if condition(contents) || Task.isCancelled { return true }
                    contents.waiters.append((id, condition, continuation))
                    return false
                }
                if satisfied { continuation.resume() }
            }
        } onCancel: {
            let waiter = contents.withLock { contents -> CheckedContinuation<Void, Never>? in
                guard let index = contents.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return contents.waiters.remove(at: index).continuation
            }
            waiter?.resume()
        }
    }

    /// Applies `change` and resumes the waiters whose condition now holds.
    private func update(_ change: @Sendable (inout Contents) -> Void) {
        let ready = contents.withLock { contents -> [CheckedContinuation<Void, Never>] in
            change(&contents)
            let snapshot = contents
            let ready = contents.waiters.filter { $0.condition(snapshot) }.map(\.continuation)
            contents.waiters.removeAll { $0.condition(snapshot) }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    private func record(_ request: HTTPRequest) {
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name.lowercased()] = value }
        let recorded = FakeOpenAIServer.RecordedRequest(method: request.method, path: request.path, headers: headers, body: request.body)
        update { $0.requests.append(recorded) }
    }

    private func recordDisconnect() {
        update { $0.disconnects += 1 }
    }

    private static let noScript = HTTPResponse.error(status: 500, code: "no_script", message: "FakeOpenAIServer has no script left for this request")

    // MARK: Chat completions

    func answerChat(_ request: HTTPRequest) async -> HTTPResponse {
        record(request)
        let json = (try? JSONDecoder().decode(JSONValue.self, from: request.body)) ?? .null
        let script = contents.withLock { contents -> FakeChatScript? in
            if !contents.chat.isEmpty { return contents.chat.removeFirst() }
            return contents.chatResponder.map { $0(json) } ?? contents.chatFallback
        }
        guard let script else { return Self.noScript }
        if script.delayBeforeHead > .zero {
            do {
                try await Task.sleep(for: script.delayBeforeHead)
            } catch {
                recordDisconnect()
                return Self.noScript
            }
        }
        var headers = HTTPHeaders(script.headers.map { ($0.key, $0.value) })
        guard (200..<300).contains(script.status) else {
            headers.set("Content-Type", "application/json")
            return HTTPResponse(status: script.status, headers: headers, body: .data(Data(script.errorBody.utf8)))
        }
        headers.set("Content-Type", "text/event-stream")
        headers.set("Cache-Control", "no-cache")
        // Frames are built before the first byte goes out, so timing reflects the script alone.
        let plan: [(frame: Data?, step: FakeChatScript.Step)] = script.steps.map { ($0.frame, $0) }
        let body = stream { [self] continuation in
            if script.timeToFirstChunk > .zero { try await Task.sleep(for: script.timeToFirstChunk) }
            var sentFirstChunk = false
            for (position, entry) in plan.enumerated() {
                if position > 0, script.interChunkDelay > .zero { try await Task.sleep(for: script.interChunkDelay) }
                switch entry.step {
                case .pause(let duration): try await Task.sleep(for: duration)
                case .stall:
                    while true {
                        try await Task.sleep(for: .milliseconds(25))
                        continuation.yield(Data(": stalled\n\n".utf8))
                    }
                case .disconnect: return
                default:
                    guard let frame = entry.frame else { continue }
                    if !sentFirstChunk {
                        sentFirstChunk = true
                        let now = ContinuousClock.now
                        contents.withLock { $0.firstChunkInstants.append(now) }
                    }
                    continuation.yield(frame)
                }
            }
        }
        return HTTPResponse(status: script.status, headers: headers, body: .stream(body))
    }

    // MARK: Transcriptions

    func answerTranscription(_ request: HTTPRequest) async -> HTTPResponse {
        record(request)
        let script = contents.withLock { $0.transcription.isEmpty ? $0.transcriptionFallback : $0.transcription.removeFirst() }
        guard let script else { return Self.noScript }
        if script.delay > .zero {
            do {
                try await Task.sleep(for: script.delay)
            } catch {
                recordDisconnect()
                return Self.noScript
            }
        }
        return HTTPResponse(status: script.status, headers: ["Content-Type": script.contentType], body: .data(Data(script.body.utf8)))
    }

    // MARK: Speech

    func answerSpeech(_ request: HTTPRequest) async -> HTTPResponse {
        record(request)
        let json = (try? JSONDecoder().decode(JSONValue.self, from: request.body)) ?? .null
        let script = contents.withLock { contents -> FakeSpeechScript? in
            if !contents.speech.isEmpty { return contents.speech.removeFirst() }
            return contents.speechResponder.map { $0(json) } ?? contents.speechFallback
        }
        guard let script else { return Self.noScript }
        let headers: HTTPHeaders = ["Content-Type": script.contentType]
        guard (200..<300).contains(script.status) else {
            return HTTPResponse(status: script.status, headers: headers, body: .data(script.body))
        }
        let body = stream { continuation in
            if script.timeToFirstByte > .zero { try await Task.sleep(for: script.timeToFirstByte) }
            var offset = script.body.startIndex
            while offset < script.body.endIndex {
                if offset > script.body.startIndex, script.interPieceDelay > .zero {
                    try await Task.sleep(for: script.interPieceDelay)
                }
                let end = min(offset + script.pieceBytes, script.body.endIndex)
                continuation.yield(script.body[offset..<end])
                offset = end
            }
        }
        return HTTPResponse(status: script.status, headers: headers, body: .stream(body))
    }

    /// A body stream fed by `produce`; a client that goes away before it ends is recorded.
    private func stream(_ produce: @escaping @Sendable (AsyncStream<Data>.Continuation) async throws -> Void) -> AsyncStream<Data> {
        // Scripts are short; the server's own back-pressure paces the socket.
        let (body, continuation) = AsyncStream.makeStream(of: Data.self, bufferingPolicy: .unbounded)
        let producer = Task {
            try? await produce(continuation)
            continuation.finish()
        }
        continuation.onTermination = { [self] termination in
            if case .cancelled = termination { recordDisconnect() }
            producer.cancel()
        }
        return body
    }
}

/// A value guarded by a lock.
final class FakeOpenAIServerLock<Value>: @unchecked Sendable {  // `lock` guards `value`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
