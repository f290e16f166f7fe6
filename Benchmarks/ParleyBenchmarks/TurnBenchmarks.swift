import Foundation
import ParleyCore
import ParleyLocal

/// The text judge's figures and the turn endings under `semantic_vad` alone (part of `turns`).
func turnSemanticVADBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    try await turnJudgeBenchmarks() + turnEvaluationBenchmarks(quick: quick, semanticVADOnly: true)
}

/// Turn-taking's judges: the time of one Smart Turn v3.2 call (8 s of features, the encoder,
/// the classifier) on one thread, what `semantic_vad` adds at every judged pause.
func runTurnBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let model = try SmartTurnModel(modelPath: ModelLocator().path(of: .smartTurn))
    var question: [Float] = []
    for try await chunk in try FliteSpeechSynthesizer().synthesize("What time is it in Tokyo right now?", options: SpeechOptions()) {
        question += chunk.map { Float($0) / 32_768 }
    }
    let clip = question + [Float](repeating: 0, count: 3_200)
    _ = model.completionProbability(of: clip)
    let seconds = medianSecondsPerCall(repetitions: quick ? 5 : 11) { _ = model.completionProbability(of: clip) }
    return [
        BenchmarkResult(area: "turns", name: "Smart Turn v3.2 one call, one thread (median)",
                        value: seconds * 1000, unit: "ms", target: "<= 100 ms", meetsTarget: seconds <= 0.1),
    ] + (try await turnJudgeBenchmarks()) + (try await interruptionBenchmarks(quick: quick)) + (try await turnEvaluationBenchmarks(quick: quick))
}
