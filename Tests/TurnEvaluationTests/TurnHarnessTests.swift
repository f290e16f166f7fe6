import Foundation
import ParleyCore
import Testing
import TurnEvaluation

/// The turn-taking harness on a small slice of its corpus, so the `turns` bench area keeps
/// working: clips made from text by flite and sox (in a fresh cache), played in real time
/// through real realtime sessions of a real server with Silero VAD and Smart Turn v3.2.
@Suite(.serialized) struct TurnHarnessTests {
    static let midThought = TurnClipRecipe(id: "test-midthought", kind: .midThoughtPause, segments: [
        .speech(text: "I'd like to book a flight to", voice: .fliteSLT), .pause(milliseconds: 1_000),
        .speech(text: "Paris on Monday.", voice: .fliteSLT),
    ])
    /// Scores 0.82 at its judged pause, above low eagerness' 0.7 (flite's "What time is it in
    /// Tokyo right now?", trimmed to its voice, scores only 0.56 there).
    static let question = TurnClipRecipe(id: "test-complete", kind: .completeQuestion, segments: [
        .speech(text: "Could you remind me to call my mother at six?", voice: .espeakUS),
    ])

    @Test func theCorpusKnowsWhereThePauseAndTheThoughtEndAndReadsBackFromItsCache() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("turn-corpus-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = try TurnCorpus(cacheDirectory: directory)
        let clip = try await corpus.clip(for: Self.midThought)
        let pause = try #require(clip.midThoughtPause)
        #expect(pause.count == TurnClip.sampleRate, "the pause is \(pause.count) samples")
        #expect(clip.thoughtEndSample == clip.samples.count)
        #expect(clip.voicedSpans.count == 2 && clip.voicedSpans.allSatisfy { LevelMeter.rms(clip.samples[$0]) > 0.01 })
        #expect(clip.samples[pause].allSatisfy { $0 == 0 })
        let again = try await corpus.clip(for: Self.midThought)
        #expect(again.samples == clip.samples)
        let cached = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(cached.count == 2 && cached.allSatisfy { $0.hasPrefix("test-midthought-") }, "\(cached)")
    }

    @Test func theNeuralVoiceSpeaksTheSameThoughtsWithTheSamePauses() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("turn-corpus-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = try TurnCorpus(cacheDirectory: directory)
        let recipes = TurnCorpusScript.neuralVoiceRecipes(slice: 1)
        #expect(recipes.map(\.id) == ["piper-complete-00", "piper-midthought-00"])
        let clip = try await corpus.clip(for: try #require(recipes.last))
        let pause = try #require(clip.midThoughtPause)
        #expect(pause.count == TurnCorpusScript.pauseMilliseconds(0) * TurnClip.sampleRate / 1000)
        #expect(clip.voicedSpans.count == 2 && clip.voicedSpans.allSatisfy { LevelMeter.rms(clip.samples[$0]) > 0.01 })
    }

    @Test func underSemanticVADLowAMidThoughtPauseDoesNotEndTheTurnAndACompleteQuestionDoes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("turn-corpus-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = try TurnCorpus(cacheDirectory: directory)
        let server = try await TurnEvaluationServer()
        let harness = TurnHarness(server: server)
        do {
            let paused = try await harness.playForTurnEnd(try await corpus.clip(for: Self.midThought), setting: .semanticVAD(.low))
            #expect(!paused.cutOffMidThought, "turn ends \(paused.turnEndsMs), verdicts \(paused.verdicts)")
            #expect(paused.verdicts.first?.endsTurn == false, "verdicts \(paused.verdicts)")
            #expect(paused.turnEndsMs.count == 1 && paused.lastVoicedToTurnEndMs.map { $0 >= 0 } == true,
                    "turn ends \(paused.turnEndsMs), the thought ended at \(paused.thoughtEndMs) ms")

            let complete = try await harness.playForTurnEnd(try await corpus.clip(for: Self.question), setting: .semanticVAD(.low))
            let delay = try #require(complete.lastVoicedToTurnEndMs, "the turn never ended")
            #expect(delay >= 0 && delay < 400, "the turn ended \(delay) ms after the last voiced sample")
            #expect(complete.verdicts.first?.endsTurn == true, "verdicts \(complete.verdicts)")
            #expect(complete.transcript?.lowercased().contains("mother") == true, "heard \(complete.transcript ?? "nothing")")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
