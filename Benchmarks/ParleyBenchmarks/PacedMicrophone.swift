import Foundation
import ParleyCore
import ParleyNet

/// Sends 20 ms chunks of 24 kHz audio as `input_audio_buffer.append` events, each when a
/// microphone would have delivered it.
final class PacedMicrophone {
    private let connection: WebSocketConnection
    private var next = ContinuousClock.now
    private let silence = [Int16](repeating: 0, count: ConversationQuestion.chunkLength)

    init(connection: WebSocketConnection) { self.connection = connection }

    /// Sends `chunk` at its moment.
    func send(_ chunk: [Int16]) async throws {
        next += .milliseconds(20)
        try await Task.sleep(until: next, clock: .continuous)
        let audio = PCM16Buffer(samples: chunk).base64EncodedString()
        try connection.send(.text(#"{"type":"input_audio_buffer.append","audio":"\#(audio)"}"#))
    }

    /// Sends silence for `duration`.
    func sendSilence(for duration: Duration) async throws {
        for _ in 0..<Int(duration.milliseconds / 20) { try await send(silence) }
    }

    /// Sends silence until `isDone`.
    /// - Throws: `ConversationBenchmarkFailure` saying `awaiting` (what did not come) when that
    ///   takes longer than `deadline`.
    func sendSilence(until isDone: () -> Bool, deadline: Duration, awaiting: String) async throws {
        let end = ContinuousClock.now + deadline
        while !isDone() {
            guard ContinuousClock.now < end else { throw ConversationBenchmarkFailure("\(awaiting) within \(deadline)") }
            try await send(silence)
        }
    }
}
