import Foundation
import ParleyCore
import ParleyNet

/// The deadline of one attempt: until output starts, a fixed first-output deadline; after that,
/// an idle deadline that every sign of progress (a stream event, 20 ms of audio) renews.
final class OutputDeadline: @unchecked Sendable {  // `lock` guards `deadline`, `outputStarted`, `delivered`.
    private let clock = ContinuousClock()
    private let timeouts: OpenAITimeouts
    private let lock = NSLock()
    private var deadline: ContinuousClock.Instant
    private var outputStarted = false
    private var delivered = false

    init(timeouts: OpenAITimeouts) {
        self.timeouts = timeouts
        deadline = clock.now.advanced(by: timeouts.firstOutput)
    }

    /// The response progressed (a stream event, 20 ms of audio); renews the idle deadline once output has started.
    /// Keep-alive comments are not progress: a server that only sends those is stalled.
    func progressed() {
        lock.withLock {
            if outputStarted { deadline = clock.now.advanced(by: timeouts.idle) }
        }
    }

    /// The response produced output (a token, a tool-call fragment, audio); the idle deadline applies from now.
    func outputArrived() {
        lock.withLock {
            outputStarted = true
            deadline = clock.now.advanced(by: timeouts.idle)
        }
    }

    /// Output was handed to the consumer; from now on the request must not be retried.
    func markDelivered() {
        lock.withLock {
            if !outputStarted {
                outputStarted = true
                deadline = clock.now.advanced(by: timeouts.idle)
            }
            delivered = true
        }
    }

    /// Whether anything was handed to the consumer.
    var hasDelivered: Bool { lock.withLock { delivered } }

    /// Returns never; throws a timeout failure once the deadline passes without being renewed.
    func enforce(_ errors: OpenAIErrorMapper) async throws {
        while true {
            let (current, started) = lock.withLock { (deadline, outputStarted) }
            // Sleeping at most `idle` notices when output starts and the deadline moves closer.
            try await clock.sleep(until: min(current, clock.now.advanced(by: timeouts.idle)), tolerance: nil)
            let (latest, stillStarted) = lock.withLock { (deadline, outputStarted) }
            if latest <= clock.now {
                let message = stillStarted || started
                    ? "the response stalled for more than \(timeouts.idle.secondsText)"
                    : "no response within \(timeouts.firstOutput.secondsText)"
                throw OpenAIFailure(error: ProviderError(.timeout, provider: errors.provider, message: message))
            }
        }
    }
}

/// Runs attempts of one request under an `OutputDeadline`, retrying retryable failures with
/// backoff as long as nothing was delivered.
struct OpenAIRequestRunner: Sendable {
    let configuration: OpenAIConfiguration
    let errors: OpenAIErrorMapper

    /// Runs `attempt` until it succeeds or fails for good.
    /// - Throws: `ProviderError`, or `CancellationError` when the calling task is cancelled.
    func run<Output: Sendable>(_ attempt: @escaping @Sendable (OutputDeadline) async throws -> Output) async throws -> Output {
        var number = 1
        while true {
            let deadline = OutputDeadline(timeouts: configuration.timeouts)
            do {
                return try await withThrowingTaskGroup(of: Output?.self) { group in
                    group.addTask { try await attempt(deadline) }
                    group.addTask {
                        try await deadline.enforce(errors)
                        return nil
                    }
                    defer { group.cancelAll() }
                    guard let first = try await group.next(), let result = first else { throw CancellationError() }
                    return result
                }
            } catch {
                guard !Task.isCancelled, let failure = errors.failure(transport: error) else { throw CancellationError() }
                guard failure.error.isRetryable, !deadline.hasDelivered, number < configuration.retry.maxAttempts else {
                    throw failure.error
                }
                try await Task.sleep(for: configuration.retry.delay(after: number, retryAfter: failure.retryAfter))
                number += 1
            }
        }
    }

    /// The transport's own inactivity timeout: a backstop behind `OutputDeadline`.
    var transportTimeout: Duration {
        max(configuration.timeouts.firstOutput, configuration.timeouts.idle) + .seconds(5)
    }
}

extension HTTPClient.StreamingResponse {
    /// Reads at most `limit` bytes of the body (for error bodies), dropping the rest.
    func bodyPrefix(_ limit: Int) async throws -> Data {
        var collected = Data()
        for try await piece in body {
            collected.append(piece.prefix(limit - collected.count))
            if collected.count >= limit { break }
        }
        return collected
    }
}

