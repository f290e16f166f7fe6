import Foundation
import ParleyCore
import ParleyServer

/// Scores a conversation against a rubric with an OpenAI-compatible chat model: the model
/// reads the transcript and answers `{"score": 0-10, "reason": "…"}`.
struct ConversationJudge: Sendable {
    /// The model that judges.
    let model: any LanguageModel

    /// What the judge is told to do.
    static let instructions = """
        You judge a conversation between a caller and a voice agent against a rubric. \
        Read the transcript, then answer with JSON only: {"score": <a number from 0 to 10>, "reason": "<one sentence>"}, \
        where 10 means the agent did everything the rubric asks and 0 nothing.
        """

    /// The judge for `context`'s `PARLEY_LLM_*` settings, with `modelName` instead of
    /// `PARLEY_LLM_MODEL` when given.
    /// - Throws: `CommandFailure` when no OpenAI-compatible chat API is configured.
    static func configured(_ context: CommandContext, modelName: String?) async throws -> ConversationJudge {
        var settings = try InProcessEngines(context).settings
        guard case .remote(let baseURL, let apiKey, let model) = settings.languageModel else {
            throw CommandFailure("a judge needs PARLEY_LLM_URL: an OpenAI-compatible chat API to score with")
        }
        settings.languageModel = .remote(baseURL: baseURL, apiKey: apiKey, model: modelName ?? model)
        do {
            return ConversationJudge(model: try await ProviderFactory.languageModel(settings).model)
        } catch {
            throw CommandFailure("the judge's model cannot be used: \(error)")
        }
    }

    /// The verdict on `turns` by `rubric`; a judge that fails or answers out of shape fails the run.
    func score(_ turns: [TurnResult], by rubric: JudgeRubric) async -> JudgeVerdict {
        let request = ChatRequest(messages: [
            .system(Self.instructions),
            .user("Rubric:\n\(rubric.rubric)\n\nTranscript:\n\(Self.transcript(turns))"),
        ], temperature: 0)
        var answer = ""
        do {
            for try await event in model.stream(request) {
                if case .textDelta(let delta) = event { answer += delta }
            }
        } catch {
            return JudgeVerdict(score: nil, passScore: rubric.passScore, reason: "the judge failed: \(error)")
        }
        guard let verdict = Self.verdict(in: answer) else {
            return JudgeVerdict(score: nil, passScore: rubric.passScore, reason: "the judge's answer has no score: \(answer.prefix(200))")
        }
        return JudgeVerdict(score: verdict.score, passScore: rubric.passScore, reason: verdict.reason)
    }

    /// The conversation as lines `Caller: …` / `Agent: …`, tool calls and handoffs noted.
    static func transcript(_ turns: [TurnResult]) -> String {
        turns.compactMap { turn -> String? in
            guard let observed = turn.observation else { return nil }
            var lines = ["Caller: \(observed.heard ?? turn.said ?? "")"]
            lines += observed.toolCalls.map { "(the agent called \($0.name) with \($0.arguments))" }
            lines += observed.handoffs.map { "(the call was handed to the agent \(observed.handoffLabel($0)))" }
            lines.append("Agent: \(observed.reply.trimmingCharacters(in: .whitespacesAndNewlines))")
            if observed.wasInterrupted { lines.append("(the caller interrupted the agent)") }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// The score and reason in the judge's answer: the first JSON object in it.
    static func verdict(in answer: String) -> (score: Double, reason: String)? {
        guard let open = answer.firstIndex(of: "{"), let close = answer.lastIndex(of: "}"), open < close,
              let json = try? JSONValue(parsing: String(answer[open...close])),
              let score = json["score"]?.numberValue, (0...10).contains(score) else { return nil }
        return (score, json["reason"]?.stringValue ?? "")
    }
}
