import Foundation
import ParleyStore

/// The JSON shapes of the operator console's API (`docs/console.md`).
enum ConsoleViews {
    /// `value` rounded to one decimal (seconds and milliseconds read no finer).
    static func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    /// A session live now, on this node or another.
    struct LiveSession: Encodable {
        var id: String
        var object = "console.session"
        var conversationID: String?
        var agentID: String?
        var instanceID: String?
        var user: String?
        var door: String
        var node: String
        var startedAt: Double
        var durationSeconds: Double
        /// `listening`, `thinking`, `speaking`, `tool_running`; `unknown` for another node's
        /// session until that node published its state.
        var state: String
        var turns: Int?
        var errors: Int?

        enum CodingKeys: String, CodingKey {
            case id, object, conversationID = "conversation_id", agentID = "agent_id", instanceID = "instance_id", user, door,
                 node, startedAt = "started_at", durationSeconds = "duration_seconds", state, turns, errors
        }
    }

    /// A stored call.
    struct Call: Encodable {
        var id: String
        var object = "console.call"
        var conversationID: String
        var agentID: String?
        var user: String?
        var door: String
        var node: String
        var startedAt: Double
        var endedAt: Double?
        var durationSeconds: Double
        var errors: Int
        var turns: Int
        var live: Bool

        init(_ record: CallRecord, now: Date) {
            id = record.id
            conversationID = record.conversationID
            agentID = record.agentID
            user = record.userID
            door = record.door
            node = record.nodeID
            startedAt = record.startedAt.timeIntervalSince1970
            endedAt = record.endedAt?.timeIntervalSince1970
            durationSeconds = ConsoleViews.tenths(record.durationSeconds(now: now))
            errors = record.errorCount
            turns = record.turnCount
            live = record.endedAt == nil
        }

        enum CodingKeys: String, CodingKey {
            case id, object, conversationID = "conversation_id", agentID = "agent_id", user, door, node,
                 startedAt = "started_at", endedAt = "ended_at", durationSeconds = "duration_seconds", errors, turns, live
        }
    }

    struct List<Element: Encodable>: Encodable {
        var object = "list"
        var data: [Element]
        var nextCursor: String?

        enum CodingKeys: String, CodingKey { case object, data, nextCursor = "next_cursor" }
    }

    /// One answered turn's figures, with where it falls in the recording.
    struct Turn: Encodable {
        var responseID: String
        var sessionID: String
        var userItemID: String?
        var turnEndedAt: Double
        var silenceWindowMs: Double?
        var detectorWaitMs: Double?
        var transcriptionMs: Double?
        var firstTokenMs: Double?
        var firstAudioMs: Double?
        var voiceToVoiceMs: Double?
        var status: String
        var unheardText: String?
        var verdicts: [InterruptionVerdict]
        /// Where the caller's speech ended in the conversation's recording, in milliseconds.
        var recordingMs: Double?

        init(_ figures: TurnFiguresRecord, recordingMs: Double?) {
            responseID = figures.responseID
            sessionID = figures.sessionID
            userItemID = figures.userItemID
            turnEndedAt = figures.turnEndedAt.timeIntervalSince1970
            silenceWindowMs = figures.silenceWindowMs
            detectorWaitMs = figures.detectorWaitMs
            transcriptionMs = figures.transcriptionMs
            firstTokenMs = figures.firstTokenMs
            firstAudioMs = figures.firstAudioMs
            voiceToVoiceMs = figures.voiceToVoiceMs
            status = figures.status
            unheardText = figures.unheardText
            verdicts = figures.verdicts
            self.recordingMs = recordingMs
        }

        enum CodingKeys: String, CodingKey {
            case responseID = "response_id", sessionID = "session_id", userItemID = "user_item_id", turnEndedAt = "turn_ended_at",
                 silenceWindowMs = "silence_window_ms", detectorWaitMs = "detector_wait_ms", transcriptionMs = "transcription_ms",
                 firstTokenMs = "first_token_ms", firstAudioMs = "first_audio_ms", voiceToVoiceMs = "voice_to_voice_ms", status,
                 unheardText = "unheard_text", verdicts, recordingMs = "recording_ms"
        }
    }

    /// A recording's address and length.
    struct Recording: Encodable {
        var url: String
        var durationMs: Int
        enum CodingKeys: String, CodingKey { case url, durationMs = "duration_ms" }
    }

    /// A conversation as the console shows it.
    struct Conversation: Encodable {
        var id: String
        var object = "console.conversation"
        var agentID: String?
        var calls: [Call]
        var items: [ConsoleTranscript.Item]
        var turns: [Turn]
        var recording: Recording?

        enum CodingKeys: String, CodingKey { case id, object, agentID = "agent_id", calls, items, turns, recording }
    }

    /// p50 and p95 of a figure.
    struct Percentiles: Encodable {
        var count: Int
        var p50: Double?
        var p95: Double?
    }

    /// One bucket of the charts.
    struct Bucket: Encodable {
        var start: Double
        var sessions: Int
        var voiceToVoice: Percentiles
        enum CodingKeys: String, CodingKey { case start, sessions, voiceToVoice = "voice_to_voice" }
    }

    /// The figures over a time window.
    struct Stats: Encodable {
        var object = "console.stats"
        var from: Double
        var to: Double
        var bucketSeconds: Int
        var sessions: Int
        var voiceToVoice: Percentiles
        var firstAudio: Percentiles
        var buckets: [Bucket]
        enum CodingKeys: String, CodingKey {
            case object, from, to, bucketSeconds = "bucket_seconds", sessions, voiceToVoice = "voice_to_voice",
                 firstAudio = "first_audio", buckets
        }
    }
}
