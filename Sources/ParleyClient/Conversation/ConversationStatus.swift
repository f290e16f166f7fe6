/// What the conversation is doing, as one word for the UI.
public enum ConversationStatus: String, Sendable, Hashable, CaseIterable {
    /// Not connected (not started yet, or waiting to reconnect).
    case disconnected
    /// Connecting, or setting up the session.
    case connecting
    /// Connected and idle: hold to talk, or type.
    case ready
    /// The microphone is taking the person's words.
    case listening
    /// The person's words are on their way; the agent is working on the answer.
    case thinking
    /// The agent's answer is playing.
    case speaking
    /// The client gave up connecting (for example the server refused to hand out tokens).
    case failed

    /// The status for a given connection and activity: listening wins over speaking (pressing
    /// to talk stops the agent), speaking over thinking.
    static func derive(connection: ConversationConnection, isListening: Bool, isSpeaking: Bool, isThinking: Bool) -> ConversationStatus {
        switch connection {
        case .idle, .waiting: return .disconnected
        case .connecting, .configuring: return .connecting
        case .failed: return .failed
        case .ready:
            if isListening { return .listening }
            if isSpeaking { return .speaking }
            if isThinking { return .thinking }
            return .ready
        }
    }
}

/// Where the conversation's connection stands.
public enum ConversationConnection: Sendable, Hashable {
    /// Not started.
    case idle
    /// A connection attempt is under way.
    case connecting
    /// Connected; the session settings are being applied.
    case configuring
    /// The session is ready.
    case ready
    /// Lost or refused; the next attempt starts after `retryIn`.
    case waiting(retryIn: Duration)
    /// The client gave up, for the reason given.
    case failed(String)
}
