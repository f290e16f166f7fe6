import Foundation
import ParleyCore

/// A scenario file: conversations with an agent, each a list of caller turns with what the
/// agent is expected to do (docs/evals.md).
struct ScenarioFile: Sendable, Hashable {
    /// The path the file was read from, as given.
    var path: String
    /// The scenarios, in file order.
    var scenarios: [Scenario]
}

/// One conversation with an agent.
struct Scenario: Sendable, Hashable {
    /// The scenario's name, shown in reports.
    var name: String
    /// The server's agent to call (`--agent` overrides it); `nil` for the server's own.
    var agentID: String?
    /// Instructions that replace the agent's for this conversation.
    var instructions: String?
    /// The voice the agent speaks with in this conversation.
    var agentVoice: String?
    /// How the caller's turns end: pressed and released, or by the server hearing silence.
    var turnDetection: CallerTurnDetection = .pushToTalk
    /// The caller's turns, in order.
    var turns: [CallerTurn]
    /// A rubric the whole conversation is scored by, when asked for.
    var judge: JudgeRubric?
}

/// One thing the caller does, and what the agent's reply to it should be.
struct CallerTurn: Sendable, Hashable {
    /// What the caller does.
    var input: CallerInput
    /// What the reply to it should show.
    var expectations: [TurnExpectation]
    /// The line of the turn in its file, for reports.
    var line: Int
}

/// How a simulated caller's spoken turns end.
enum CallerTurnDetection: String, Sendable, Hashable, CaseIterable {
    /// The caller commits each utterance and asks for the reply, as a push-to-talk client
    /// does; speech over a reply does nothing unless the caller cuts the reply itself.
    case pushToTalk = "push_to_talk"
    /// The caller streams audio and the server's turn detection ends turns, answers them and
    /// judges speech over its replies (interruption or backchannel).
    case serverVAD = "server_vad"
}

/// What a caller says or does in one turn.
enum CallerInput: Sendable, Hashable {
    /// Spoken words: the fragments are synthesised with `voice` (the configured voice when
    /// `nil`) and sent as one utterance with `pauseMs` of silence between them.
    case say(fragments: [String], voice: CallerVoice?, pauseMs: Int)
    /// The speech in a WAV file.
    case wav(path: String)
    /// A typed message, sent as text.
    case text(String)
    /// Words spoken to cut the previous turn's reply `afterReplyMs` after its first audio.
    case interrupt(words: String, voice: CallerVoice?, afterReplyMs: Int)
    /// Words that only acknowledge ("mm-hm") spoken over the previous turn's reply
    /// `afterReplyMs` after its first audio; the server should keep talking.
    case backchannel(words: String, voice: CallerVoice?, afterReplyMs: Int)
    /// Keys pressed on a phone's keypad (`PhoneKeypad.keys`), one `parley.key_press` each,
    /// `interKeyMs` apart; each press cuts the reply to the one before, and the turn's reply is
    /// the last one's.
    case keys(String, interKeyMs: Int)

    /// How reports name the turn's kind.
    var kind: String {
        switch self {
        case .say: "say"
        case .wav: "wav"
        case .text: "text"
        case .interrupt: "interrupt"
        case .backchannel: "backchannel"
        case .keys: "keys"
        }
    }

    /// How long after the previous turn's reply started the caller speaks over it, for the
    /// turns that do.
    var speaksOverReplyAfterMs: Int? {
        switch self {
        case .interrupt(_, _, let after), .backchannel(_, _, let after): after
        default: nil
        }
    }

    /// The words the caller means, for reports (a WAV file's are only known once heard).
    var words: String? {
        switch self {
        case .say(let fragments, _, _): fragments.joined(separator: " ")
        case .wav, .keys: nil
        case .text(let text): text
        case .interrupt(let words, _, _), .backchannel(let words, _, _): words
        }
    }
}

/// The embedded voices a simulated caller speaks with.
enum CallerVoice: String, Sendable, Hashable, CaseIterable {
    case piper
    case flite
    case espeakNG = "espeak-ng"
}

/// One thing the agent's reply to a turn should show.
enum TurnExpectation: Sendable, Hashable {
    /// The reply contains the text (case and surrounding spaces ignored).
    case replyContains(String)
    /// The reply matches the regular expression.
    case replyMatches(String)
    /// A tool called `name` was called, with arguments holding these members.
    case toolCalled(name: String, argumentsContain: [String: JSONValue])
    /// No tool was called.
    case noToolCalled
    /// The conversation was handed off to this agent.
    case handoffTo(String)
    /// The reply's first audio came within this many milliseconds of the caller's last.
    case replyStartedWithin(milliseconds: Int)
    /// The reply was cut by the next turn's interruption (`true`), or ran to its end (`false`).
    case interrupted(Bool)

    /// The expectation as written in a scenario file, for reports.
    var label: String {
        switch self {
        case .replyContains(let text): "reply_contains \(JSONValue.string(text).jsonText)"
        case .replyMatches(let pattern): "reply_matches \(JSONValue.string(pattern).jsonText)"
        case .toolCalled(let name, let arguments):
            arguments.isEmpty ? "tool_called \(name)" : "tool_called \(name) \(JSONValue.object(arguments).jsonText)"
        case .noToolCalled: "no_tool_called"
        case .handoffTo(let agent): "handoff_to \(agent)"
        case .replyStartedWithin(let milliseconds): "reply_started_within_ms \(milliseconds)"
        case .interrupted(let cut): "interrupted \(cut)"
        }
    }
}

/// A rubric an OpenAI-compatible model scores a conversation by, from 0 to 10.
struct JudgeRubric: Sendable, Hashable {
    /// What a good conversation does, in words.
    var rubric: String
    /// The lowest score that passes.
    var passScore: Double
}
