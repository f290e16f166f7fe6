import Foundation
import ParleyCore

/// A `LanguageModel` that plays back scripted replies, one per request, and records requests.
///
/// ```swift
/// let model = ScriptedLanguageModel(replies: [
///     .toolCalls([ToolCall(id: "1", name: "calculate", arguments: #"{"expression":"2+2"}"#)]),
///     .text("It is 4."),
/// ])
/// ```
public final class ScriptedLanguageModel: LanguageModel, @unchecked Sendable {  // `lock` guards all vars.
    /// One thing a scripted reply does.
    public enum Step: Sendable {
        /// Yields a text delta.
        case text(String)
        /// Yields an assembled tool call.
        case toolCall(ToolCall)
        /// Waits on the continuous clock before the next step.
        case pause(Duration)
        /// Waits until the gate opens (a test learns from it that the reply began).
        case wait(AsyncGate)
        /// Ends the stream with an error.
        case fail(any Error)
        /// Yields `.finished` and ends the stream.
        case finish(FinishReason, TokenUsage?)
        /// Never continues: waits until the consumer cancels.
        case hang
    }

    /// The steps of one reply. Without an explicit `.finish` or `.fail`, the reply ends with
    /// `.finished(.toolCalls)` when it made tool calls and `.finished(.stop)` otherwise.
    public struct Reply: Sendable {
        /// The steps, in order.
        public var steps: [Step]

        /// Creates a reply from steps.
        public init(_ steps: [Step]) {
            self.steps = steps
        }

        /// A text reply, streamed in pieces of at most `pieceLength` characters.
        public static func text(_ text: String, pieceLength: Int = 4, usage: TokenUsage? = nil) -> Reply {
            var steps: [Step] = []
            var rest = Substring(text)
            while !rest.isEmpty {
                steps.append(.text(String(rest.prefix(max(1, pieceLength)))))
                rest = rest.dropFirst(max(1, pieceLength))
            }
            steps.append(.finish(.stop, usage))
            return Reply(steps)
        }

        /// A reply that calls tools, optionally after some text.
        public static func toolCalls(_ calls: [ToolCall], text: String? = nil, usage: TokenUsage? = nil) -> Reply {
            var steps: [Step] = text.map { [.text($0)] } ?? []
            steps += calls.map { .toolCall($0) }
            steps.append(.finish(.toolCalls, usage))
            return Reply(steps)
        }

        /// A reply that fails at once with `error`.
        public static func failure(_ error: any Error) -> Reply {
            Reply([.fail(error)])
        }
    }

    private let lock = NSLock()
    private var replies: [Reply]
    private let fallback: Reply?
    private var recordedRequests: [ChatRequest] = []
    private var cancelledCount = 0

    /// Creates a model that answers the n-th request with the n-th reply.
    /// - Parameter fallback: the reply once `replies` are used up; `nil` makes further requests
    ///   fail with an `invalidRequest` `ProviderError`.
    public init(replies: [Reply], fallback: Reply? = nil) {
        self.replies = replies
        self.fallback = fallback
    }

    /// Adds replies after the ones still to come (for scripts that name what a test creates first).
    public func append(contentsOf more: [Reply]) {
        lock.withLock { replies += more }
    }

    /// The requests received so far, oldest first.
    public var requests: [ChatRequest] {
        lock.lock()
        defer { lock.unlock() }
        return recordedRequests
    }

    /// How many streams the consumer cancelled before they ended.
    public var cancelledStreams: Int {
        lock.lock()
        defer { lock.unlock() }
        return cancelledCount
    }

    public func stream(_ request: ChatRequest) -> AsyncThrowingStream<LanguageModelEvent, any Error> {
        lock.lock()
        recordedRequests.append(request)
        let reply = replies.isEmpty ? fallback : replies.removeFirst()
        lock.unlock()

        let (events, continuation) = AsyncThrowingStream.makeStream(of: LanguageModelEvent.self, bufferingPolicy: .unbounded)
        guard let reply else {
            continuation.finish(throwing: ProviderError(.invalidRequest, provider: "scripted", message: "no scripted reply left"))
            return events
        }
        let playback = Task {
            var madeToolCalls = false
            do {
                for step in reply.steps {
                    try Task.checkCancellation()
                    switch step {
                    case .text(let text):
                        continuation.yield(.textDelta(text))
                    case .toolCall(let call):
                        madeToolCalls = true
                        continuation.yield(.toolCall(call))
                    case .pause(let duration):
                        try await Task.sleep(for: duration)
                    case .wait(let gate):
                        await gate.wait()
                    case .fail(let error):
                        continuation.finish(throwing: error)
                        return
                    case .finish(let reason, let usage):
                        continuation.yield(.finished(reason, usage))
                        continuation.finish()
                        return
                    case .hang:
                        try await Task.sleep(for: .seconds(86_400 * 365))
                    }
                }
                continuation.yield(.finished(madeToolCalls ? .toolCalls : .stop, nil))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { [self] termination in
            if case .cancelled = termination {
                lock.lock()
                cancelledCount += 1
                lock.unlock()
            }
            playback.cancel()
        }
        return events
    }
}
