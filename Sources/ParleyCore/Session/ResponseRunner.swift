import Foundation

/// Runs one response: the agent writes, a sentence segmenter cuts its text into speakable
/// pieces, and the synthesizer speaks each piece as soon as it is complete, concurrently
/// with the agent still writing. Cancelling the task running `run` stops everything.
struct ResponseRunner: Sendable {
    /// What the runner hands to its session, in order.
    enum Event: Sendable {
        case textDelta(String)
        /// A text chunk goes to speech synthesis (chunks go in order, each once the one before is spoken).
        case synthesisStarted(segment: String)
        /// Output audio at the session's rate, with the text segment it speaks.
        case audio([Int16], segment: String)
        case toolCallStarted(ToolCall)
        case toolCallFinished(ToolCall, output: String, isError: Bool)
        /// An assistant message with server tool calls, or a tool result, to store.
        case intermediateMessage(ChatMessage)
        /// The model called tools the client runs; the response ends here.
        case clientToolCalls(text: String, calls: [ToolCall])
        case finished(FinishReason, TokenUsage?)
        case failed(SessionError)
    }

    /// How one of the two halves ended.
    private enum Outcome: Sendable {
        case thought(FinishReason, TokenUsage?)
        case spoken
        case stopped
        case failed(SessionError)
    }

    /// Output chunk length in milliseconds.
    static let chunkMilliseconds = 40

    let responseID: String
    let agent: Agent
    let history: [ChatMessage]
    /// `nil` for text-only responses.
    let synthesizer: (any SpeechSynthesizer)?
    let speech: SpeechOptions
    let outputSampleRate: Int
    let makeResampler: @Sendable (Int, Int) -> any Resampler

    /// Runs the response, handing events to `deliver`; stops as soon as `deliver` returns
    /// `false` (the session ended the response).
    func run(deliver: @escaping @Sendable (Event) async -> Bool) async {
        let (segments, segmentSink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        await withTaskGroup(of: Outcome.self) { group in
            group.addTask { await think(into: segmentSink, deliver: deliver) }
            if let synthesizer {
                group.addTask { await speak(segments, with: synthesizer, deliver: deliver) }
            }
            var finish: (FinishReason, TokenUsage?)?
            for await outcome in group {
                switch outcome {
                case .thought(let reason, let usage):
                    finish = (reason, usage)
                case .spoken:
                    break
                case .stopped:
                    group.cancelAll()
                    return
                case .failed(let error):
                    group.cancelAll()
                    _ = await deliver(.failed(error))
                    return
                }
            }
            if let finish, !Task.isCancelled { _ = await deliver(.finished(finish.0, finish.1)) }
        }
    }

    /// The agent half: streams text out and feeds complete segments to the speaker.
    private func think(into segments: AsyncStream<String>.Continuation, deliver: @Sendable (Event) async -> Bool) async -> Outcome {
        defer { segments.finish() }
        var segmenter = SentenceSegmenter()
        // Calls waiting for approval go to the client like its own tools' calls.
        let clientToolNames = Set(agent.options.externalTools.map(\.name)).union(agent.options.approvalRequiredTools)
        do {
            for try await event in agent.run(history: history) {
                switch event {
                case .textDelta(let delta):
                    guard await deliver(.textDelta(delta)) else { return .stopped }
                    segmenter.append(delta).forEach { segments.yield($0) }
                case .filler(let line):
                    // Said as part of the reply, after what the model wrote before its tool calls:
                    // it shows in the transcript and is stored as what was said.
                    segmenter.flush().forEach { segments.yield($0) }
                    guard await deliver(.textDelta(line + " ")) else { return .stopped }
                    segments.yield(line)
                case .toolCallStarted(let call):
                    guard await deliver(.toolCallStarted(call)) else { return .stopped }
                case .toolCallFinished(let call, let output, let isError):
                    guard await deliver(.toolCallFinished(call, output: output, isError: isError)) else { return .stopped }
                case .message(.assistant(let text, let calls, _)) where calls.contains { clientToolNames.contains($0.name) }:
                    guard await deliver(.clientToolCalls(text: text, calls: calls)) else { return .stopped }
                case .message(let message):
                    if case .assistant(_, let calls, _) = message, calls.isEmpty { continue }
                    guard await deliver(.intermediateMessage(message)) else { return .stopped }
                case .stepFinished:
                    continue
                case .finished(let reason, let usage):
                    segmenter.flush().forEach { segments.yield($0) }
                    return .thought(reason, usage)
                }
            }
            segmenter.flush().forEach { segments.yield($0) }
            return .thought(.stop, nil)
        } catch is CancellationError {
            return .stopped
        } catch {
            return Task.isCancelled ? .stopped : .failed(SessionError.provider(error, stage: "response"))
        }
    }

    /// The speaker half: synthesises each segment in order and sends its audio in chunks.
    private func speak(
        _ segments: AsyncStream<String>, with synthesizer: any SpeechSynthesizer, deliver: @Sendable (Event) async -> Bool
    ) async -> Outcome {
        let chunkLength = outputSampleRate * Self.chunkMilliseconds / 1000
        for await segment in segments {
            var resampler = synthesizer.sampleRate == outputSampleRate ? nil : makeResampler(synthesizer.sampleRate, outputSampleRate)
            var pending: [Int16] = []
            guard await deliver(.synthesisStarted(segment: segment)) else { return .stopped }
            do {
                for try await audio in synthesizer.synthesize(segment, options: speech) {
                    pending += convert(audio, with: &resampler)
                    while pending.count >= chunkLength {
                        let chunk = Array(pending.prefix(chunkLength))
                        pending.removeFirst(chunkLength)
                        guard await deliver(.audio(chunk, segment: segment)) else { return .stopped }
                    }
                }
                if var remaining = resampler {
                    pending += SampleConversion.pcm16(remaining.flush())
                    resampler = remaining
                }
                if !pending.isEmpty, !(await deliver(.audio(pending, segment: segment))) { return .stopped }
            } catch is CancellationError {
                return .stopped
            } catch {
                return Task.isCancelled ? .stopped : .failed(SessionError.provider(error, stage: "speech"))
            }
        }
        return Task.isCancelled ? .stopped : .spoken
    }

    private func convert(_ audio: [Int16], with resampler: inout (any Resampler)?) -> [Int16] {
        guard var active = resampler else { return audio }
        let converted = SampleConversion.pcm16(active.process(SampleConversion.float(audio)))
        resampler = active
        return converted
    }
}
