import Foundation

/// Where turn-completion models run: one thread of their own, not the Swift concurrency pool,
/// whose few threads (two on a 2-core machine) every session's audio and network work shares;
/// a judgement takes about 100 ms of CPU.
enum TurnCompletionQueue {
    private static let queue = DispatchQueue(label: "parley.turn-completion", qos: .userInitiated)

    /// The probability that the turn in `samples` (at `rate`) is complete, by `model`, run on
    /// the queue; `nil` when the calling task is cancelled first.
    static func completionProbability(
        of samples: [Float], at rate: Int, by model: any TurnCompletionModel, makeResampler: @escaping @Sendable (Int, Int) -> any Resampler
    ) async -> Float? {
        await run {
            var resampler = makeResampler(rate, model.sampleRate)
            let audio = model.sampleRate == rate ? samples : resampler.process(samples)
            return model.completionProbability(of: audio)
        }
    }

    /// Runs `work` on the queue and returns its result.
    /// - Returns: `nil` when the calling task is cancelled first; the work is then skipped
    ///   unless it has already begun.
    static func run<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value? {
        let handoff = Handoff<Value>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard handoff.wait(with: continuation) else { return }
                queue.async {
                    guard handoff.isAwaited else { return }
                    handoff.give(work())
                }
            }
        } onCancel: {
            handoff.give(nil)
        }
    }
}
