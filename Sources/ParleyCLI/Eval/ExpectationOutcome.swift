import Foundation
import ParleyCore

/// Whether one expectation held for a turn, and why not when it did not.
struct ExpectationOutcome: Sendable, Hashable {
    /// The expectation as written, e.g. `reply_contains "42"`.
    var expectation: String
    /// Whether it held.
    var passed: Bool
    /// Why it failed, in words; empty when it passed.
    var reason: String

    /// The expectation `expectation` checked against what a turn showed.
    init(_ expectation: TurnExpectation, _ observed: TurnObservation) {
        self.expectation = expectation.label
        reason = Self.failure(of: expectation, observed) ?? ""
        passed = reason.isEmpty
    }

    /// An outcome given directly (the judge's).
    init(expectation: String, passed: Bool, reason: String) {
        self.expectation = expectation
        self.passed = passed
        self.reason = reason
    }

    /// Why `expectation` does not hold for `observed`, or `nil` when it does.
    private static func failure(of expectation: TurnExpectation, _ observed: TurnObservation) -> String? {
        let reply = observed.reply.trimmingCharacters(in: .whitespacesAndNewlines)
        let quotedReply = reply.isEmpty ? "the reply had no words" : "the reply was \(JSONValue.string(reply).jsonText)"
        switch expectation {
        case .replyContains(let text):
            let wanted = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return reply.range(of: wanted, options: [.caseInsensitive, .diacriticInsensitive]) == nil ? quotedReply : nil
        case .replyMatches(let pattern):
            guard let regex = try? NSRegularExpression(pattern: pattern) else { return "not a regular expression" }
            return regex.firstMatch(in: reply, range: NSRange(reply.startIndex..., in: reply)) == nil ? quotedReply : nil
        case .toolCalled(let name, let wanted):
            let calls = observed.toolCalls.filter { $0.name == name }
            guard !calls.isEmpty else {
                return observed.toolCalls.isEmpty ? "no tool was called" : "only \(Self.names(observed.toolCalls)) called"
            }
            let mismatches = calls.map { argumentMismatch($0.arguments, wanted) }
            guard let mismatch = mismatches.first(where: { $0 != nil }), mismatches.allSatisfy({ $0 != nil }) else { return nil }
            return "\(name) was called with \(calls.last?.arguments ?? "{}"): \(mismatch ?? "")"
        case .noToolCalled:
            return observed.toolCalls.isEmpty ? nil : "\(Self.names(observed.toolCalls)) called"
        case .handoffTo(let agent):
            let handedTo = observed.handoffs.contains { id in
                id == agent || observed.handoffNames[id]?.caseInsensitiveCompare(agent) == .orderedSame
            }
            if handedTo { return nil }
            if !observed.handoffs.isEmpty { return "handed off to \(observed.handoffs.map(observed.handoffLabel).joined(separator: ", ")) instead" }
            if let refused = observed.refusedHandoffs.first { return "the server refused the handoff to \(refused)" }
            return "no handoff: the agent answered the caller itself"
        case .replyStartedWithin(let limit):
            guard let after = observed.replyStartedAfterMs else { return "the reply had no audio" }
            return after <= limit ? nil : "the reply started after \(after) ms"
        case .interrupted(true):
            guard let heardMs = observed.interruptedAtAudioMs else { return "the reply ended before the interruption" }
            if observed.wasInterrupted { return nil }
            return "the caller interrupted after \(heardMs) ms of the reply, but the server let it end (\(observed.responseStatus ?? "no status"))"
        case .interrupted(false):
            return observed.wasInterrupted ? "the reply was cut after \(observed.interruptedAtAudioMs ?? 0) ms" : nil
        }
    }

    /// `calculate was` or `calculate and lookup were`.
    private static func names(_ calls: [TurnObservation.ToolCall]) -> String {
        let names = calls.map(\.name)
        return names.count == 1 ? "\(names[0]) was" : "\(names.joined(separator: " and ")) were"
    }

    /// Which wanted argument the call's arguments lack, or `nil` when they hold them all.
    /// Strings compare ignoring case; other values must be equal.
    private static func argumentMismatch(_ arguments: String, _ wanted: [String: JSONValue]) -> String? {
        guard !wanted.isEmpty else { return nil }
        guard case .object(let given)? = try? JSONValue(parsing: arguments) else { return "its arguments are not a JSON object" }
        for key in wanted.keys.sorted() {
            let expected = wanted[key] ?? .null
            guard let actual = given[key] else { return "\(key) is missing" }
            if case .string(let expectedText) = expected, case .string(let actualText) = actual,
               expectedText.caseInsensitiveCompare(actualText) == .orderedSame { continue }
            if actual != expected { return "\(key) is \(actual.jsonText), not \(expected.jsonText)" }
        }
        return nil
    }
}
