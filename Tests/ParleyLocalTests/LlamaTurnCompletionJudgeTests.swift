import Foundation
import ParleyCore
import Testing
@testable import ParleyLocal

/// The text judge of `semantic_vad` on the real SmolLM2-135M-Instruct in a real llama-server:
/// cut-off thoughts score unfinished, complete requests finished, and a judge that fails or is
/// late leaves the pause to the word rule. The sentences are none of the turn corpus'.
@Suite(.serialized) struct LlamaTurnCompletionJudgeTests {
    /// Whisper-style transcripts of pauses mid-thought, several ending on words the word rule
    /// does not know ("could", "that", "wants", a noun).
    static let unfinished = [
        "I was hoping that you could.", "So what I'm trying to say is that", "My sister is coming over and she wants.",
        "Could you play something by", "Actually, my appointment with the doctor.", "Which of these two restaurants has",
    ]
    /// Complete requests, with and without a question mark.
    static let complete = [
        "How do you say thank you in Japanese?", "Turn on the lights in the bedroom.", "Who wrote Pride and Prejudice?",
        "Set a timer for ten minutes.", "What's on my calendar tomorrow morning?", "Tell me a joke.",
    ]

    static func startServer() async throws -> LocalLLMServer {
        var configuration = try LocalLLMServer.Configuration.smolLM2()
        (configuration.parallelSlots, configuration.contextSize, configuration.threadCount) = (1, 512, 1)
        configuration.addTurnCompletionJudgeSlot()
        let server = try LocalLLMServer(configuration: configuration)
        try await server.start()
        return server
    }

    @Test func cutOffThoughtsScoreUnfinishedAndCompleteRequestsFinished() async throws {
        let server = try await Self.startServer()
        let judge = server.turnCompletionJudge()
        var wrong: [String] = []
        for text in Self.unfinished {
            let verdict = try await judge.judge(text)
            if verdict.isComplete { wrong.append("\(text) → complete (\(verdict.probability))") }
        }
        for text in Self.complete {
            let verdict = try await judge.judge(text)
            if !verdict.isComplete { wrong.append("\(text) → unfinished (\(verdict.probability))") }
        }
        await server.stop()
        #expect(wrong.isEmpty, "\(wrong)")
    }

    @Test func theJudgesSlotIsItsOwn() async throws {
        let server = try await Self.startServer()
        let judge = server.turnCompletionJudge()
        // The conversation slot the server was asked for is still free for a conversation.
        let conversation = server.conversationModel(configuration: .init(baseURL: server.baseURL, model: "smollm2"))
        #expect(conversation.slot == 1)
        _ = try await judge.judge("Set a timer for ten minutes.")
        await server.stop()
    }

    /// Without the judge the word rule lets "…she wants." end; with it the turn stays open.
    @Test func theSessionsReadingAsksTheJudgeWhereTheWordRuleSeesNothing() async throws {
        let server = try await Self.startServer()
        let judge = server.turnCompletionJudge()
        let text = "My sister is coming over and she wants."
        let withoutJudge = await PauseTranscriptReading.isUnfinished(text, judge: nil)
        let withJudge = await PauseTranscriptReading.isUnfinished(text, judge: judge, deadline: .seconds(20))
        await server.stop()
        #expect(!withoutJudge)
        #expect(withJudge)
    }

    /// A question mark on a fragment and one on a question ending on a preposition.
    @Test func theJudgeTellsAFragmentWithAQuestionMarkFromAQuestion() async throws {
        let server = try await Self.startServer()
        let judge = server.turnCompletionJudge()
        let fragment = await PauseTranscriptReading.isUnfinished("Could you tell me the way to?", judge: judge, deadline: .seconds(20))
        let question = await PauseTranscriptReading.isUnfinished("Where are you from?", judge: judge, deadline: .seconds(20))
        await server.stop()
        #expect(fragment)
        #expect(!question)
    }

    /// A stopped server fails the judge; the reading keeps to the word rule either way.
    @Test func aFailingJudgeLeavesThePauseToTheWordRule() async throws {
        let server = try await Self.startServer()
        let judge = server.turnCompletionJudge()
        await server.stop()
        await #expect(throws: ProviderError.self) { try await judge.judge("Turn on the lights in the bedroom.") }
        #expect(await PauseTranscriptReading.isUnfinished("Book me a flight to.", judge: judge))
        #expect(await !PauseTranscriptReading.isUnfinished("My sister is coming over and she wants.", judge: judge))
    }

    /// A deadline the real judge cannot meet: the word rule decides, the question is dropped.
    @Test func aLateJudgeLeavesThePauseToTheWordRule() async throws {
        let server = try await Self.startServer()
        let judge = server.turnCompletionJudge()
        let late = await PauseTranscriptReading.isUnfinished("My sister is coming over and she wants.", judge: judge, deadline: .zero)
        let onTime = await PauseTranscriptReading.isUnfinished("My sister is coming over and she wants.", judge: judge, deadline: .seconds(20))
        await server.stop()
        #expect(!late)
        #expect(onTime)
    }
}
