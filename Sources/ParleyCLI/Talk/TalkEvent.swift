import Foundation

/// What one voice turn yields, in order: what was heard, then the reply as it is produced.
enum TalkEvent: Sendable, Hashable {
    /// The final transcript of the user's audio (not empty).
    case heard(String)
    /// More of the reply's text.
    case replyText(String)
    /// More of the reply's speech: mono PCM16 at the turn's output rate.
    case replyAudio([Int16])
    /// A server-side tool began running, with its arguments when known.
    case toolStarted(name: String, arguments: String?)
    /// A server-side tool finished, with its output when known.
    case toolFinished(name: String, output: String?, isError: Bool)
}
