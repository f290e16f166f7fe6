import Foundation
import ParleyNet

/// One realtime WebSocket session holding a conversation the way a person at a microphone
/// does: each question goes out as 20 ms `input_audio_buffer.append` chunks paced in real
/// time, silence in between; the reply plays as it arrives, and the next question comes half
/// a second after it has finished playing.
final class RealtimeConversation {
    private let connection: WebSocketConnection
    private let recorder: ConversationRecorder
    private let listener: Task<Void, Never>
    private let microphone: PacedMicrophone

    /// Opens a session at `url` (which must ask for `parley_events`, for the turn's stages),
    /// sets `turnDetection` (JSON) first when given, and sends half a second of silence.
    init(url: URL, secret: String, turnDetection: String? = nil) async throws {
        let connection = try await WebSocketClient.connect(to: url, headers: ["Authorization": "Bearer \(secret)"])
        let recorder = ConversationRecorder()
        self.connection = connection
        self.recorder = recorder
        listener = Task {
            for await message in connection.messages {
                if case .text(let text) = message { recorder.record(serverEvent: text) }
            }
        }
        microphone = PacedMicrophone(connection: connection)
        do {
            if let turnDetection {
                try connection.send(.text(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":\#(turnDetection)}}}}"#))
            }
            try await microphone.sendSilence(for: .milliseconds(500))
        } catch {
            close()
            throw error
        }
    }

    /// Asks `question`, listens to the whole reply and takes a breath; returns the turn's figures.
    /// - Throws: `ConversationBenchmarkFailure` when no reply begins within 30 s, it does not end
    ///   within 3 minutes, the server reports an error or a stage is missing.
    func ask(_ question: ConversationQuestion) async throws -> ConversationTurnFigures {
        recorder.beginTurn()
        for (chunkIndex, chunk) in question.chunks.enumerated() {
            try await microphone.send(chunk)
            if chunkIndex == question.chunks.count - 1 { recorder.lastVoicedSampleSent() }
        }
        // The reply must begin within 30 s; its `response.done` follows its audio, paced in
        // real time, so a long reply (150 tokens is about half a minute of speech) ends later.
        try await microphone.sendSilence(until: { recorder.hasReplyStarted }, deadline: .seconds(30), awaiting: "no reply")
        try await microphone.sendSilence(until: { recorder.isAnswered }, deadline: .seconds(180), awaiting: "no response.done after the reply's audio")
        let turn = try recorder.figures(for: question)
        // A person listens to the end of the reply, then takes a breath. (Asking sooner would
        // talk over the reply: the server would cut it to what was heard and mark it interrupted.)
        let playedOut = recorder.replyPlayedOutAt(outputSampleRate: 24_000) ?? .now
        try await microphone.sendSilence(until: { ContinuousClock.now >= playedOut }, deadline: .seconds(120), awaiting: "the reply's end")
        try await microphone.sendSilence(for: .milliseconds(500))
        return turn
    }

    /// Closes the session.
    func close() {
        connection.close()
        listener.cancel()
    }
}
