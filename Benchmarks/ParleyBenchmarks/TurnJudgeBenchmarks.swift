import Foundation
import ParleyCore
import ParleyLocal
import TurnEvaluation

/// The text judge of `semantic_vad` (SmolLM2-135M-Instruct on llama-server, one thread) on
/// sentences none of the corpus': how many it reads right, on the calibration set its
/// threshold was chosen on, the held-out set, and the corpus' own texts (complete questions,
/// mid-thought first halves), next to the word rule alone; and how long a judgement takes.
func turnJudgeBenchmarks() async throws -> [BenchmarkResult] {
    var configuration = try LocalLLMServer.Configuration.smolLM2()
    (configuration.parallelSlots, configuration.contextSize, configuration.threadCount) = (1, 512, 1)
    let server = try LocalLLMServer(configuration: configuration)
    try await server.start()
    let judge = server.turnCompletionJudge()
    let sets: [(String, complete: [String], unfinished: [String])] = [
        ("calibration (15 + 15)", TurnJudgeSentences.calibrationComplete, TurnJudgeSentences.calibrationUnfinished),
        ("held-out (20 + 25)", TurnJudgeSentences.heldOutComplete, TurnJudgeSentences.heldOutUnfinished),
        ("turn corpus texts (20 + 20)", TurnCorpusScript.completeQuestions, TurnCorpusScript.midThoughtPairs.map(\.0)),
    ]
    var results: [BenchmarkResult] = []
    var milliseconds: [Double] = []
    do {
        for (name, complete, unfinished) in sets {
            var right = (complete: 0, unfinished: 0)
            for text in complete + unfinished {
                let start = ContinuousClock.now
                let verdict = try await judge.judge(text)
                milliseconds.append((ContinuousClock.now - start).milliseconds)
                let isComplete = complete.contains(text)
                if verdict.isComplete != isComplete {
                    FileHandle.standardError.write(Data(String(format: "turns: text judge wrong on %@ \"%@\": %.3f\n", name, text, verdict.probability).utf8))
                } else if isComplete {
                    right.complete += 1
                } else {
                    right.unfinished += 1
                }
            }
            let byWords = unfinished.filter(UnfinishedThought.isUnfinished).count
            results += [
                BenchmarkResult(area: "turns", name: "text judge (SmolLM2 end-of-message probability < \(LlamaTurnCompletionJudge.smolLM2Threshold)), \(name): unfinished thoughts read as unfinished",
                                value: percent(right.unfinished, unfinished.count), unit: "%", target: "", meetsTarget: nil),
                BenchmarkResult(area: "turns", name: "text judge, \(name): complete requests read as complete",
                                value: percent(right.complete, complete.count), unit: "%", target: "", meetsTarget: nil),
                BenchmarkResult(area: "turns", name: "word rule alone (UnfinishedThought), \(name): unfinished thoughts read as unfinished",
                                value: percent(byWords, unfinished.count), unit: "%", target: "", meetsTarget: nil),
            ]
        }
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
    milliseconds.sort()
    results.append(BenchmarkResult(area: "turns", name: "text judge: one judgement (HTTP /completion, n_probs 40, cached prompt prefix), one llama-server thread, p50",
                                   value: milliseconds[milliseconds.count / 2], unit: "ms", target: "", meetsTarget: nil))
    return results
}

private func percent(_ count: Int, _ total: Int) -> Double { total == 0 ? .nan : Double(count) / Double(total) * 100 }
