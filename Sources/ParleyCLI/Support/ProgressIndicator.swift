import Foundation

/// A spinner with elapsed seconds on standard error, for work that can take more than a second.
///
/// Drawn only when standard error is a terminal and colours are allowed (`NO_COLOR` unset);
/// otherwise it writes nothing, so pipes and logs stay clean.
struct ProgressIndicator: Sendable {
    private let task: Task<Void, Never>?
    private let output: TextOutput

    /// Starts showing `label` (e.g. `Loading the speech model`).
    init(_ label: String, context: CommandContext) {
        output = context.errorOutput
        guard context.errorStyle.isEnabled else {
            task = nil
            return
        }
        let output = output
        let frames = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
        output.write("\r\u{1B}[K\(frames[0]) \(label)… 0s")
        task = Task {
            let clock = ContinuousClock()
            let start = clock.now
            var frame = 1
            while true {
                try? await clock.sleep(for: .milliseconds(100))
                if Task.isCancelled { return }
                let elapsed = Int((clock.now - start).components.seconds)
                output.write("\r\u{1B}[K\(frames[frame % frames.count]) \(label)… \(elapsed)s")
                frame += 1
            }
        }
    }

    /// Stops the spinner and erases its line.
    func finish() async {
        guard let task else { return }
        task.cancel()
        await task.value
        output.write("\r\u{1B}[K")
    }
}

extension CommandContext {
    /// Runs `work` while a progress indicator shows `label`.
    func withProgress<Value: Sendable>(_ label: String, _ work: () async throws -> Value) async throws -> Value {
        let progress = ProgressIndicator(label, context: self)
        do {
            let value = try await work()
            await progress.finish()
            return value
        } catch {
            await progress.finish()
            throw error
        }
    }
}
