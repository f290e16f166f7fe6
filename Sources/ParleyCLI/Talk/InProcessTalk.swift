import Foundation
import ParleyCore

/// One voice turn on a `VoiceSession` in this process: push-to-talk input, committed at once.
struct InProcessTalk: Sendable {
    /// The engines and tools.
    let providers: VoiceSessionProviders
    /// The session's configuration; turn detection is switched off (the file is one turn).
    let configuration: VoiceSessionConfiguration

    /// The sample rate of `.replyAudio`.
    static let outputSampleRate = AudioFormat.realtime.sampleRate

    /// Runs the turn on `samples` (mono PCM16 at `sampleRate`).
    /// - Returns: the turn's events; the stream throws `CommandFailure` when nothing was heard or
    ///   a provider failed.
    func run(_ samples: [Int16], sampleRate: Int) -> AsyncThrowingStream<TalkEvent, any Error> {
        var configuration = configuration
        configuration.turnDetection = nil
        configuration.partialTranscriptIntervalMs = 0
        let session = VoiceSession(providers: providers, configuration: configuration, outputSampleRate: Self.outputSampleRate)
        let (events, continuation) = AsyncThrowingStream.makeStream(of: TalkEvent.self, bufferingPolicy: .unbounded)
        let turn = Task {
            do {
                try await session.appendAudio(samples, sampleRate: sampleRate)
                try await session.commitAudio(createResponse: true)
                try await Self.relay(session.events, to: continuation)
                continuation.finish()
            } catch let error as SessionError {
                continuation.finish(throwing: CommandFailure(error.message))
            } catch {
                continuation.finish(throwing: error)
            }
            await session.close()
        }
        continuation.onTermination = { _ in turn.cancel() }
        return events
    }

    /// Passes the session's events on until the response is done.
    private static func relay(
        _ events: AsyncStream<VoiceSessionEvent>, to continuation: AsyncThrowingStream<TalkEvent, any Error>.Continuation
    ) async throws {
        for await event in events {
            switch event {
            case .userTranscriptFinal(_, let text, _):
                guard !text.isEmpty else { throw CommandFailure("no speech was heard") }
                continuation.yield(.heard(text))
            case .userTranscriptFailed(_, let error):
                throw CommandFailure("transcription failed: \(error.message)")
            case .agentTextDelta(_, _, let delta):
                continuation.yield(.replyText(delta))
            case .agentAudio(_, _, let samples):
                continuation.yield(.replyAudio(samples))
            case .toolCallStarted(_, let call):
                continuation.yield(.toolStarted(name: call.name, arguments: call.arguments))
            case .toolCallFinished(_, let call, let output, let isError):
                continuation.yield(.toolFinished(name: call.name, output: output, isError: isError))
            case .error(let error):
                throw CommandFailure(error.message)
            case .responseDone(_, let status, let error, _):
                switch status {
                case .completed, .incomplete: return
                case .failed: throw CommandFailure(error?.message ?? "the reply failed")
                case .cancelled: throw CommandFailure("the reply was cancelled")
                }
            default:
                break
            }
        }
        throw CancellationError()
    }
}
