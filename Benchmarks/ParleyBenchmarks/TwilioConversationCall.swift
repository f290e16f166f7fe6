import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyNet
import ParleySync

/// One phone call holding a conversation over the Twilio path, the way a caller lives it: each
/// question goes out in real time (8 kHz μ-law, one `media` message every 20 ms, silence in
/// between), the agent's answer plays as Twilio plays it (each `mark` is echoed once the audio
/// sent before it has played, a `clear` drops what has not), and the next question comes half
/// a second after the answer has finished playing.
final class TwilioConversationCall: Sendable {
    private struct Listening {
        /// When all the agent audio received so far will have played.
        var playedOutAt: ContinuousClock.Instant?
        /// The current turn's first agent audio.
        var firstMediaAt: ContinuousClock.Instant?
        /// Marks not yet echoed, each with the moment its audio has played.
        var pendingMarks: [(name: String, playedAt: ContinuousClock.Instant)] = []
    }

    private let stream: SimulatedTwilioStream
    private let listening = Locked(Listening())
    private let start = ContinuousClock.now
    private let sent = Locked(0)
    private let listener: Task<Void, Never>

    /// Places a call to the server on `port`.
    init(port: Int) async throws {
        let stream = try await SimulatedTwilioStream.open(port: port)
        self.stream = stream
        let listening = listening
        listener = Task {
            for await message in stream.socket.messages {
                guard case .text(let text) = message else { continue }
                Self.hear(text, into: listening)
            }
        }
    }

    /// Asks `speech` (20 ms `media` payloads ending with the question's last voiced sample) and
    /// listens to the whole answer; returns the time from sending the last voiced payload to the
    /// answer's first `media`.
    /// - Throws: `EmbeddedBenchmarkFailure` when no answer begins within 30 s or does not end within 3 minutes.
    func ask(_ speech: [String]) async throws -> Duration {
        listening.withLock { $0.firstMediaAt = nil }
        for payload in speech { try await send(payload) }
        let lastVoicedSentAt = ContinuousClock.now
        try await sendSilence(until: { $0.firstMediaAt != nil }, within: .seconds(30), awaiting: "no answer")
        let firstMedia = listening.withLock { $0.firstMediaAt! }
        try await listenToTheEnd()
        return firstMedia - lastVoicedSentAt
    }

    /// Sends silence until the agent's audio has played, no more has come for a second, and every
    /// mark has been echoed; then half a second more, as a caller takes a breath.
    func listenToTheEnd() async throws {
        try await sendSilence(until: { state in
            state.pendingMarks.isEmpty && (state.playedOutAt.map { ContinuousClock.now >= $0 + .seconds(1) } ?? true)
        }, within: .seconds(180), awaiting: "the answer's end")
        for _ in 0..<25 { try await send(CallScript.silence) }
    }

    /// Hangs up.
    func hangUp() {
        stream.stop(mediaSent: sent.withLock { $0 })
        listener.cancel()
        stream.socket.close()
    }

    private func sendSilence(until isDone: (Listening) -> Bool, within limit: Duration, awaiting: String) async throws {
        let end = ContinuousClock.now + limit
        while !listening.withLock({ isDone($0) }) {
            guard ContinuousClock.now < end else { throw EmbeddedBenchmarkFailure("\(awaiting) within \(limit)") }
            try await send(CallScript.silence)
        }
    }

    /// Sends the next 20 ms of the caller's audio at its moment, and echoes the marks whose audio has played.
    private func send(_ payload: String) async throws {
        let index = sent.withLock { sent in defer { sent += 1 }; return sent }
        try await Task.sleep(until: start + .milliseconds(20 * (index + 1)), clock: .continuous)
        try stream.sendMedia(payload, index: index)
        let now = ContinuousClock.now
        let played = listening.withLock { state in
            let due = state.pendingMarks.prefix { $0.playedAt <= now }.map(\.name)
            state.pendingMarks.removeFirst(due.count)
            return due
        }
        for name in played { try stream.acknowledgeMark(name) }
    }

    /// Takes one message of the server: agent audio extends what is playing, a mark waits for
    /// it, a `clear` stops it (Twilio then echoes every waiting mark at once).
    private static func hear(_ text: String, into listening: Locked<Listening>) {
        guard let message = try? JSONValue(parsing: text), let event = message["event"]?.stringValue else { return }
        let now = ContinuousClock.now
        listening.withLock { state in
            switch event {
            case "media":
                let bytes = (try? Base64Codec.decode(message["media"]?["payload"]?.stringValue ?? ""))?.count ?? 0
                // μ-law: one byte a sample, 8,000 samples a second.
                state.playedOutAt = max(state.playedOutAt ?? now, now) + .microseconds(bytes * 125)
                state.firstMediaAt = state.firstMediaAt ?? now
            case "mark":
                guard let name = message["mark"]?["name"]?.stringValue else { return }
                state.pendingMarks.append((name, state.playedOutAt ?? now))
            case "clear":
                state.playedOutAt = now
                state.pendingMarks = state.pendingMarks.map { ($0.name, now) }
            default:
                break
            }
        }
    }
}
