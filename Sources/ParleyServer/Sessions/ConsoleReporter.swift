import Foundation
import ParleyCore
import ParleyStore

/// What a door's session tells the operator console, read from the session's events: what it
/// is doing now and how many turns and errors it had (kept in `LiveSessions`), and each
/// answered turn's figures, which the door stores with its items. Every door's connection
/// keeps one.
struct ConsoleReporter {
    private let sessions: LiveSessions
    private let session: VoiceSession
    private var figures: TurnFiguresRecorder
    /// The state last reported (speech comes in many chunks; each change is reported once).
    private var state = "listening"

    init(sessions: LiveSessions, session: VoiceSession, conversationID: String, sessionID: String) {
        self.sessions = sessions
        self.session = session
        figures = TurnFiguresRecorder(conversationID: conversationID, sessionID: sessionID)
    }

    /// The silence that ends a turn under `configuration`: `server_vad`'s window; `nil` when a
    /// semantic judge or the client ends turns.
    static func silenceWindowMs(of configuration: VoiceSessionConfiguration) -> Double? {
        configuration.turnDetection.flatMap { $0.eagerness == nil ? Double($0.silenceDurationMs) : nil }
    }

    /// Takes one session event; returns a turn's figures to store once they are complete.
    mutating func observe(_ event: VoiceSessionEvent, configuration: VoiceSessionConfiguration) -> TurnFiguresRecord? {
        switch event {
        case .responseStarted, .toolCallFinished:
            report("thinking")
        case .agentAudio:
            report("speaking")
        case .toolCallStarted:
            report("tool_running")
        case .responseDone(_, _, let error, _):
            report("listening")
            sessions.countTurn(of: session)
            if error != nil { sessions.countError(of: session) }
        case .error:
            sessions.countError(of: session)
        default:
            break
        }
        return figures.observe(event, silenceWindowMs: Self.silenceWindowMs(of: configuration))
    }

    private mutating func report(_ newState: String) {
        guard newState != state else { return }
        state = newState
        sessions.setState(newState, of: session)
    }
}
