import Foundation
import ParleyCore

/// A chat with an agent running in this process; the history lives here for the session.
actor InProcessChat: ChatBackend {
    nonisolated let description: String
    private let agent: Agent
    private var history: [ChatMessage] = []

    /// Creates a chat with `agent`.
    init(agent: Agent, description: String) {
        self.agent = agent
        self.description = description
    }

    func reply(to text: String) -> AsyncThrowingStream<ChatReplyEvent, any Error> {
        let (replies, continuation) = AsyncThrowingStream.makeStream(of: ChatReplyEvent.self, bufferingPolicy: .unbounded)
        let turn = Task {
            do {
                try await run(text, continuation: continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in turn.cancel() }
        return replies
    }

    /// Runs one turn; the history gains the turn's messages only when the turn succeeds.
    private func run(_ text: String, continuation: AsyncThrowingStream<ChatReplyEvent, any Error>.Continuation) async throws {
        var turn: [ChatMessage] = [.user(text)]
        for try await event in agent.run(history: history + turn) {
            switch event {
            case .textDelta(let delta): continuation.yield(.text(delta))
            case .toolCallStarted(let call): continuation.yield(.toolStarted(name: call.name, arguments: call.arguments))
            case .toolCallFinished(let call, let output, let isError):
                continuation.yield(.toolFinished(name: call.name, output: output, isError: isError))
            case .message(let message): turn.append(message)
            case .filler, .stepFinished, .finished: break
            }
        }
        history += turn
    }

    func reset() {
        history.removeAll()
    }

    func close() {}
}
