import Foundation
import ParleyCore

/// Turns a session's events into one trace per turn: a `parley.turn` root span and, under it,
/// the stages — `parley.vad` (speech start until the turn detector ends the turn),
/// `parley.asr` (the final transcription), `chat {model}` (the language model, with the
/// `gen_ai.*` attributes of OpenTelemetry's GenAI conventions), one `execute_tool {name}` per
/// tool call, and `parley.tts` (first text until the last audio sent). Times are wall-clock,
/// taken as the events happen. A response with no user turn before it (a typed message, an
/// out-of-band request) is a turn of its own. Each turn names the agent that answered
/// (`gen_ai.agent.id`); the turn an agent answers right after taking the conversation over has a
/// `parley.handoff` span. Spans carry ids, names, timings, token counts and
/// error codes only: never audio, text, tool output or secrets.
struct TurnTracer {
    private let exporter: OTLPTraceExporter
    /// The language model of the agent holding the session now (a handoff may change it).
    var model: String
    private let sessionID: String
    private let conversationID: String
    private let now: @Sendable () -> Date
    /// The agent holding the session now; turns started from here on are its.
    var agentID: String?
    /// A handoff not yet shown: the next turn begins with it.
    private var handoff: (from: String, to: String, at: Date)?

    /// A turn under way.
    private struct Turn {
        var traceID = TraceSpan.makeTraceID()
        var rootID = TraceSpan.makeSpanID()
        var start: Date
        var speechStart: Date?
        var audioStartMs: Int?
        var audioEndMs: Int?
        var committed: Date?
        var transcribed: Date?
        var transcriptionError: String?
        var responseID: String?
        var responseStart: Date?
        var firstText: Date?
        var lastText: Date?
        var firstAudio: Date?
        var lastAudio: Date?
        var audioSamples = 0
        var tools: [String: (start: Date, name: String)] = [:]
        var isOutOfBand = false
        var agentID: String?
        var model: String?
        var handoff: (from: String, to: String, at: Date)?
        /// Set once the response is done: its outcome, waiting for the session's `TurnMetrics`.
        var outcome: (status: String, error: String?, usage: TokenUsage?, end: Date)?
    }

    private var userTurn: Turn?
    /// Turns of responses in progress, by response id.
    private var responses: [String: Turn] = [:]
    /// Turns whose response is done, until their `TurnMetrics` arrive (right after), by response id.
    private var awaitingMetrics: [String: Turn] = [:]

    init(exporter: OTLPTraceExporter, model: String, sessionID: String, conversationID: String, now: @escaping @Sendable () -> Date = Date.init) {
        self.exporter = exporter
        self.model = model
        self.sessionID = sessionID
        self.conversationID = conversationID
        self.now = now
    }

    /// Takes one session event.
    mutating func observe(_ event: VoiceSessionEvent) {
        let time = now()
        switch event {
        case .speechStarted(_, let audioStartMs):
            if let unanswered = userTurn { export(unanswered, status: "no_response", at: time) }
            userTurn = Turn(start: time, speechStart: time, audioStartMs: audioStartMs)
        case .speechStopped(_, let audioEndMs):
            userTurn?.audioEndMs = audioEndMs
        case .inputCommitted:
            if userTurn == nil { userTurn = Turn(start: time) }
            userTurn?.committed = time
        case .userTranscriptFinal:
            userTurn?.transcribed = time
        case .userTranscriptFailed(_, let error):
            userTurn?.transcribed = time
            userTurn?.transcriptionError = error.code
        case .responseStarted(let responseID, let request):
            var turn = (request.isOutOfBand ? nil : userTurn.take()) ?? Turn(start: time)
            turn.responseID = responseID
            turn.responseStart = time
            turn.isOutOfBand = request.isOutOfBand
            turn.agentID = agentID
            turn.model = model
            if !request.isOutOfBand { turn.handoff = handoff.take() }
            responses[responseID] = turn
        case .agentTextDelta(let responseID, _, _):
            if responses[responseID]?.firstText == nil { responses[responseID]?.firstText = time }
            responses[responseID]?.lastText = time
        case .agentAudio(let responseID, _, let samples):
            if responses[responseID]?.firstAudio == nil { responses[responseID]?.firstAudio = time }
            responses[responseID]?.lastAudio = time
            responses[responseID]?.audioSamples += samples.count
        case .toolCallStarted(let responseID, let call):
            responses[responseID]?.tools[call.id] = (time, call.name)
        case .toolCallFinished(let responseID, let call, _, let isError):
            guard var turn = responses[responseID], let started = turn.tools.removeValue(forKey: call.id) else { break }
            responses[responseID] = turn
            exporter.submit(TraceSpan(
                traceID: turn.traceID, spanID: TraceSpan.makeSpanID(), parentSpanID: turn.rootID,
                name: "execute_tool \(started.name)", kind: .internal, start: started.start, end: time,
                attributes: [
                    "gen_ai.operation.name": .string("execute_tool"), "gen_ai.tool.name": .string(started.name),
                    "gen_ai.tool.call.id": .string(call.id), "gen_ai.tool.type": .string("function"),
                ],
                errorMessage: isError ? "the tool call failed" : nil
            ))
        case .responseDone(let responseID, let status, let error, let usage):
            guard var turn = responses.removeValue(forKey: responseID) else { break }
            guard turn.isOutOfBand else {
                // The session's own latency figures for the turn come next, in `turnMetrics`.
                turn.outcome = (status.rawValue, error?.code, usage, time)
                awaitingMetrics[responseID] = turn
                break
            }
            export(turn, status: status.rawValue, error: error?.code, usage: usage, at: time)
        case .turnMetrics(let metrics):
            guard let turn = awaitingMetrics.removeValue(forKey: metrics.responseID), let outcome = turn.outcome else { break }
            export(turn, status: outcome.status, error: outcome.error, usage: outcome.usage, metrics: metrics, at: outcome.end)
        case .agentHandoff(let report) where report.error == nil:
            agentID = report.toAgent
            handoff = (report.fromAgent, report.toAgent, time)
        default:
            break
        }
    }

    /// Exports what is left when the session ends.
    mutating func finish() {
        let time = now()
        if let turn = userTurn.take() { export(turn, status: "no_response", at: time) }
        for turn in responses.values { export(turn, status: "cancelled", at: time) }
        for turn in awaitingMetrics.values {
            if let outcome = turn.outcome { export(turn, status: outcome.status, error: outcome.error, usage: outcome.usage, at: outcome.end) }
        }
        responses.removeAll()
        awaitingMetrics.removeAll()
    }

    private func export(
        _ turn: Turn, status: String, error: String? = nil, usage: TokenUsage? = nil, metrics: TurnMetrics? = nil, at end: Date
    ) {
        func child(_ name: String, kind: TraceSpan.Kind = .internal, _ start: Date, _ end: Date, _ attributes: [String: TraceSpan.Value], error: String? = nil) {
            exporter.submit(TraceSpan(
                traceID: turn.traceID, spanID: TraceSpan.makeSpanID(), parentSpanID: turn.rootID, name: name, kind: kind,
                start: start, end: end, attributes: attributes, errorMessage: error
            ))
        }
        if let handoff = turn.handoff {
            child("parley.handoff", handoff.at, turn.responseStart ?? handoff.at, [
                "parley.handoff.from_agent": .string(handoff.from), "parley.handoff.to_agent": .string(handoff.to),
            ])
        }
        if let speechStart = turn.speechStart {
            var attributes: [String: TraceSpan.Value] = [:]
            if let value = turn.audioStartMs { attributes["parley.vad.audio_start_ms"] = .int(value) }
            if let value = turn.audioEndMs { attributes["parley.vad.audio_end_ms"] = .int(value) }
            child("parley.vad", speechStart, turn.committed ?? end, attributes)
        }
        if let committed = turn.committed {
            child("parley.asr", kind: .client, committed, turn.transcribed ?? end, [:], error: turn.transcriptionError)
        }
        if let responseStart = turn.responseStart {
            var attributes: [String: TraceSpan.Value] = [
                "gen_ai.operation.name": .string("chat"), "gen_ai.request.model": .string(turn.model ?? model),
            ]
            if let responseID = turn.responseID { attributes["gen_ai.response.id"] = .string(responseID) }
            if let usage {
                attributes["gen_ai.usage.input_tokens"] = .int(usage.promptTokens)
                attributes["gen_ai.usage.output_tokens"] = .int(usage.completionTokens)
            }
            child("chat \(turn.model ?? model)", kind: .client, responseStart, turn.lastText ?? end, attributes, error: status == "failed" ? error : nil)
        }
        if let lastAudio = turn.lastAudio {
            child("parley.tts", kind: .client, turn.firstText ?? turn.firstAudio ?? lastAudio, lastAudio, [
                "parley.tts.audio_ms": .int(turn.audioSamples * 1000 / AudioFormat.realtime.sampleRate),
            ])
        }
        var attributes: [String: TraceSpan.Value] = [
            "parley.session.id": .string(sessionID), "gen_ai.conversation.id": .string(conversationID),
            "parley.response.status": .string(status),
        ]
        if let agentID = turn.agentID { attributes["gen_ai.agent.id"] = .string(agentID) }
        // The session's own measurements (its monotonic clock, from the end of the user's speech).
        if let value = metrics?.transcriptionMs { attributes["parley.turn.transcription_ms"] = .double(value) }
        if let value = metrics?.firstTokenMs { attributes["parley.turn.first_token_ms"] = .double(value) }
        if let value = metrics?.firstSynthesisMs { attributes["parley.turn.first_synthesis_ms"] = .double(value) }
        if let value = metrics?.firstAudioMs { attributes["parley.turn.first_audio_ms"] = .double(value) }
        exporter.submit(TraceSpan(
            traceID: turn.traceID, spanID: turn.rootID, parentSpanID: nil, name: "parley.turn", kind: .server,
            start: turn.start, end: end, attributes: attributes, errorMessage: status == "failed" ? (error ?? "failed") : nil
        ))
    }
}
