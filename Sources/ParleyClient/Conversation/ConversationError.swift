/// Something the person should know went wrong, in words they can act on.
public struct ConversationError: Identifiable, Sendable, Hashable {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, Hashable {
        /// The app may not use the microphone; only Settings can change that.
        case microphoneDenied
        /// The microphone would not start or stopped during a hold.
        case microphoneFailed
        /// An action needs a connection and there is none right now.
        case notConnected
        /// The connection was lost or could not be made.
        case connection
        /// The server refused something the client sent.
        case server
        /// What the person said could not be transcribed.
        case transcription
        /// The agent could not answer.
        case agent
    }

    /// Distinguishes successive errors (for `.alert(item:)`-style presentation).
    public let id: Int
    /// What kind of problem it is.
    public let kind: Kind
    /// The explanation to show.
    public let message: String

    /// Whether the fix is in the system Settings (show a button that opens them).
    public var opensSettings: Bool { kind == .microphoneDenied }

    /// Creates an error.
    public init(id: Int, kind: Kind, message: String) {
        self.id = id
        self.kind = kind
        self.message = message
    }
}
