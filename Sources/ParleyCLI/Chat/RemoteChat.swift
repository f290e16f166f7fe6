import Foundation
import ParleyCore

/// A chat with an agent on a running server, over a text-only realtime session.
actor RemoteChat: ChatBackend {
    nonisolated let description: String
    private let server: ServerConnection
    private let agentID: String?
    private var link: RealtimeLink
    private var events: RealtimeLink.Events

    /// Opens a text-only session with the server's agent (its default agent when `agentID` is `nil`).
    /// - Throws: `CommandFailure` when the session cannot be opened.
    init(server: ServerConnection, agentID: String?) async throws {
        self.server = server
        self.agentID = agentID
        description = "\(agentID ?? "the default agent") at \(server.baseURL.absoluteString)"
        (link, events) = try await Self.openTextSession(server, agentID: agentID)
    }

    private static func openTextSession(_ server: ServerConnection, agentID: String?) async throws -> (RealtimeLink, RealtimeLink.Events) {
        let (link, events) = try await RealtimeLink.open(server, agentID: agentID)
        try link.send(.sessionUpdate(RealtimeSessionSettings(outputModalities: [.text], turnDetection: .manual)))
        return (link, events)
    }

    func reply(to text: String) -> AsyncThrowingStream<ChatReplyEvent, any Error> {
        let (replies, continuation) = AsyncThrowingStream.makeStream(of: ChatReplyEvent.self, bufferingPolicy: .unbounded)
        do {
            try link.send(.conversationItemCreate(item: .message(id: nil, role: .user, content: [.inputText(text)])))
            try link.send(.responseCreate())
        } catch {
            continuation.finish(throwing: error)
            return replies
        }
        let turn = Task { await self.relayResponse(to: continuation) }
        continuation.onTermination = { _ in turn.cancel() }
        return replies
    }

    /// Passes the response's text and tool activity on until `response.done`.
    private func relayResponse(to continuation: AsyncThrowingStream<ChatReplyEvent, any Error>.Continuation) async {
        var lastError: RealtimeProtocolError?
        var events = self.events
        while let event = await events.next() {
            switch event {
            case .responseOutputTextDelta(_, let delta), .responseOutputAudioTranscriptDelta(_, let delta):
                continuation.yield(.text(delta))
            case .parley(let type, let payload) where type == "parley.tool_call.started":
                continuation.yield(.toolStarted(name: payload["name"]?.stringValue ?? "tool", arguments: nil))
            case .parley(let type, let payload) where type == "parley.tool_call.finished":
                continuation.yield(.toolFinished(
                    name: payload["name"]?.stringValue ?? "tool", output: nil, isError: payload["is_error"]?.boolValue ?? false
                ))
            case .error(let error):
                lastError = error
            case .responseDone(let response):
                switch response.status {
                case .failed:
                    let message = response.statusDetails?.error?.message ?? lastError?.message ?? "the response failed"
                    continuation.finish(throwing: CommandFailure(message))
                case .cancelled:
                    continuation.finish(throwing: CommandFailure("the server cancelled the response"))
                default:
                    continuation.finish()
                }
                return
            default:
                break
            }
        }
        continuation.finish(throwing: CommandFailure("the server closed the realtime session"))
    }

    func reset() async throws {
        link.close()
        (link, events) = try await Self.openTextSession(server, agentID: agentID)
    }

    func close() {
        link.close()
    }
}
