import Foundation

/// What a chat reply shows while it is written.
enum ChatReplyEvent: Sendable, Hashable {
    /// More of the reply's text.
    case text(String)
    /// A tool began running, with its arguments when known.
    case toolStarted(name: String, arguments: String?)
    /// A tool finished, with its output when known.
    case toolFinished(name: String, output: String?, isError: Bool)
}

/// Who answers a chat: an agent in process or one on a running server.
protocol ChatBackend: Sendable {
    /// Words naming who answers, for the greeting line (e.g. `the model at http://…`).
    var description: String { get }
    /// Sends the user's `text` and streams the reply; the stream throws when the turn fails.
    func reply(to text: String) async -> AsyncThrowingStream<ChatReplyEvent, any Error>
    /// Forgets the conversation so far.
    func reset() async throws
    /// Ends the conversation and releases what it holds.
    func close() async
}
