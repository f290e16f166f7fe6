import Foundation
import ParleyCore

/// One voice turn on a running server over the realtime protocol: the audio is appended and
/// committed, and once its transcript is in, a response is asked for.
struct RemoteTalk: Sendable {
    /// The server.
    let server: ServerConnection
    /// The server's agent, or `nil` for its default agent.
    let agentID: String?
    /// Whether the reply is spoken (audio and transcript) or only written.
    let speaksReply: Bool

    /// Runs the turn on `samples` (mono PCM16 at 24 kHz).
    /// - Returns: the turn's events; the stream throws `CommandFailure` for refusals and failures.
    func run(_ samples: [Int16]) -> AsyncThrowingStream<TalkEvent, any Error> {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: TalkEvent.self, bufferingPolicy: .unbounded)
        let turn = Task {
            do {
                let (link, serverEvents) = try await RealtimeLink.open(server, agentID: agentID)
                do {
                    try await converse(link, serverEvents, samples, continuation)
                    link.close()
                    continuation.finish()
                } catch {
                    link.close()
                    throw error
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in turn.cancel() }
        return events
    }

    private func converse(
        _ link: RealtimeLink, _ serverEvents: RealtimeLink.Events, _ samples: [Int16],
        _ continuation: AsyncThrowingStream<TalkEvent, any Error>.Continuation
    ) async throws {
        var events = serverEvents
        try link.send(.sessionUpdate(RealtimeSessionSettings(
            outputModalities: speaksReply ? [.audio] : [.text], turnDetection: .manual
        )))
        try link.sendUtterance(samples)
        var lastError: RealtimeProtocolError?
        while let event = await events.next() {
            switch event {
            case .inputAudioTranscriptionCompleted(_, _, let transcript, _):
                let text = transcript.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !text.isEmpty else { throw CommandFailure("no speech was heard") }
                continuation.yield(.heard(text))
                try link.send(.responseCreate())
            case .inputAudioTranscriptionFailed(_, _, let error):
                throw CommandFailure("transcription failed: \(error.message)")
            case .responseOutputTextDelta(_, let delta), .responseOutputAudioTranscriptDelta(_, let delta):
                continuation.yield(.replyText(delta))
            case .responseOutputAudioDelta(_, let delta):
                do {
                    continuation.yield(.replyAudio(try PCM16Buffer(base64: delta).samples))
                } catch {
                    throw CommandFailure("the server sent audio that is not base64 pcm16: \(error)")
                }
            case .parley(let type, let payload) where type == "parley.tool_call.started":
                continuation.yield(.toolStarted(name: payload["name"]?.stringValue ?? "tool", arguments: nil))
            case .parley(let type, let payload) where type == "parley.tool_call.finished":
                continuation.yield(.toolFinished(
                    name: payload["name"]?.stringValue ?? "tool", output: nil, isError: payload["is_error"]?.boolValue ?? false
                ))
            case .error(let error):
                // Errors about the input end the turn; others are kept for a failed response.
                if error.code.hasPrefix("input_audio_buffer") { throw CommandFailure(error.message) }
                lastError = error
            case .responseDone(let response):
                switch response.status {
                case .completed, .incomplete, .inProgress: return
                case .failed: throw CommandFailure(response.statusDetails?.error?.message ?? lastError?.message ?? "the reply failed")
                case .cancelled: throw CommandFailure("the server cancelled the reply")
                }
            default:
                break
            }
        }
        throw CommandFailure("the server closed the realtime session before the reply was done")
    }
}
