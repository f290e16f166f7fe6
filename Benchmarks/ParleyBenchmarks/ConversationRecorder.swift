import Foundation
import ParleyCore

/// One answered turn of the conversation benchmark, in milliseconds.
struct ConversationTurnFigures: Sendable {
    var question: ConversationQuestion
    /// Last voiced sample sent → first `response.output_audio.delta` received.
    var voiceToVoiceMs: Double
    /// Last voiced sample sent → `input_audio_buffer.speech_stopped` received: VAD lag and the
    /// silence window.
    var turnEndMs: Double
    /// Turn end → final transcript, as the server measured it (`parley.turn_metrics`).
    var transcriptionMs: Double
    /// Turn end → first token of the language model, as the server measured it.
    var firstTokenMs: Double
    /// Turn end → the reply's first text chunk handed to speech synthesis, as the server measured it.
    var firstSynthesisMs: Double
    /// Turn end → first reply audio, as the server measured it.
    var firstAudioMs: Double
    /// What is left: the server's first audio → the delta received, and the clocks' difference.
    var deliveryMs: Double { voiceToVoiceMs - turnEndMs - firstAudioMs }
    /// Prompt tokens of the reply's request (the history grows each turn).
    var inputTokens: Int?
    var transcript: String
    var reply: String

    /// Each stage with its values over `figures`, in pipeline order.
    static func stages(of figures: [ConversationTurnFigures]) -> [(String, [Double])] {
        [
            ("last voiced sample sent -> speech_stopped received (VAD lag + silence window or turn judge)", figures.map(\.turnEndMs)),
            ("turn end -> final transcript (server, whisper)", figures.map(\.transcriptionMs)),
            ("turn end -> first LLM token (server)", figures.map(\.firstTokenMs)),
            ("turn end -> first text chunk to speech synthesis (server)", figures.map(\.firstSynthesisMs)),
            ("turn end -> first audio out (server)", figures.map(\.firstAudioMs)),
            ("server's first audio -> output_audio.delta received", figures.map(\.deliveryMs)),
        ]
    }

    /// The stages of this turn in a few words.
    var split: String {
        String(format: "turn end %.0f + first audio %.0f (transcript %.0f, token %.0f, synthesis from %.0f) + delivery %.0f",
               turnEndMs, firstAudioMs, transcriptionMs, firstTokenMs, firstSynthesisMs, deliveryMs)
    }
}

/// What the realtime server said during one turn of the conversation, and when.
///
/// `@unchecked Sendable`: every stored property is guarded by `lock`.
final class ConversationRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var lastVoicedSentAt: ContinuousClock.Instant?
    private var speechStoppedAt: ContinuousClock.Instant?
    private var firstAudioAt: ContinuousClock.Instant?
    /// Bytes of reply audio received (pcm16 at `outputSampleRate`).
    private var replyAudioBytes = 0
    private var metrics: (transcription: Double?, firstToken: Double?, firstSynthesis: Double?, firstAudio: Double?)?
    private var inputTokens: Int?
    private var transcript = ""
    private var reply = ""
    private var responsesDone = 0
    private var failure: String?

    /// Starts a new turn: forgets the previous one.
    func beginTurn() {
        lock.withLock {
            lastVoicedSentAt = nil
            speechStoppedAt = nil
            firstAudioAt = nil
            replyAudioBytes = 0
            metrics = nil
            inputTokens = nil
            transcript = ""
            reply = ""
            responsesDone = 0
        }
    }

    /// Notes that the chunk with the question's last voiced sample has just been sent.
    func lastVoicedSampleSent() {
        let now = ContinuousClock.now
        lock.withLock { lastVoicedSentAt = now }
    }

    /// When a client playing the reply as it arrived hears its end: its first audio plus the
    /// length of all its audio (`nil` before the first audio).
    func replyPlayedOutAt(outputSampleRate: Int) -> ContinuousClock.Instant? {
        lock.withLock {
            firstAudioAt.map { $0 + .seconds(Double(replyAudioBytes / 2) / Double(outputSampleRate)) }
        }
    }

    /// The length of what a base64 text decodes to, without decoding it.
    private static func decodedLength(ofBase64 text: String) -> Int {
        let padding = text.hasSuffix("==") ? 2 : text.hasSuffix("=") ? 1 : 0
        return text.utf8.count / 4 * 3 - padding
    }

    /// Whether the turn's reply has begun (its first audio arrived), or the session failed.
    var hasReplyStarted: Bool { lock.withLock { firstAudioAt != nil || failure != nil } }

    /// Whether the turn's reply has finished (`response.done` after its audio began), or the
    /// session failed.
    var isAnswered: Bool { lock.withLock { (firstAudioAt != nil && responsesDone > 0 && metrics != nil) || failure != nil } }

    /// Records a realtime server event (JSON text).
    func record(serverEvent text: String) {
        let now = ContinuousClock.now
        guard let event = try? JSONValue(parsing: text), let type = event["type"]?.stringValue else { return }
        lock.withLock {
            // Until the question has been asked, nothing the server says belongs to this turn.
            guard lastVoicedSentAt != nil || type == "error" else { return }
            switch type {
            case "input_audio_buffer.speech_stopped":
                if firstAudioAt == nil { speechStoppedAt = now }
            case "conversation.item.input_audio_transcription.completed":
                transcript = event["transcript"]?.stringValue ?? ""
            case "response.output_audio_transcript.delta":
                reply += event["delta"]?.stringValue ?? ""
            case "response.output_audio.delta":
                if firstAudioAt == nil { firstAudioAt = now }
                replyAudioBytes += Self.decodedLength(ofBase64: event["delta"]?.stringValue ?? "")
            case "response.done":
                if firstAudioAt != nil {
                    responsesDone += 1
                    inputTokens = event["response"]?["usage"]?["input_tokens"]?.numberValue.map { Int($0) }
                }
            case "parley.turn_metrics":
                metrics = (
                    event["transcription_ms"]?.numberValue, event["first_token_ms"]?.numberValue,
                    event["first_synthesis_ms"]?.numberValue, event["first_audio_ms"]?.numberValue
                )
            case "error":
                failure = failure ?? (event["error"]?["message"]?.stringValue ?? text)
            default:
                break
            }
        }
    }

    /// The turn's figures.
    /// - Throws: `ConversationBenchmarkFailure` when the session failed or a stage is missing.
    func figures(for question: ConversationQuestion) throws -> ConversationTurnFigures {
        try lock.withLock {
            if let failure { throw ConversationBenchmarkFailure("\"\(question.text)\": \(failure)") }
            guard let lastVoicedSentAt, let speechStoppedAt, let firstAudioAt, let metrics,
                  let transcription = metrics.transcription, let firstToken = metrics.firstToken,
                  let firstSynthesis = metrics.firstSynthesis, let firstAudio = metrics.firstAudio
            else {
                throw ConversationBenchmarkFailure("\"\(question.text)\" is missing a stage (heard \"\(transcript)\", replied \"\(reply)\")")
            }
            return ConversationTurnFigures(
                question: question,
                voiceToVoiceMs: (firstAudioAt - lastVoicedSentAt).milliseconds,
                turnEndMs: (speechStoppedAt - lastVoicedSentAt).milliseconds,
                transcriptionMs: transcription,
                firstTokenMs: firstToken,
                firstSynthesisMs: firstSynthesis,
                firstAudioMs: firstAudio,
                inputTokens: inputTokens,
                transcript: transcript,
                reply: reply
            )
        }
    }
}
