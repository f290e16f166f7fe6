import Foundation
import ParleyCore
import ParleyTesting

/// Runs `FakeOpenAIServer` as a process until it is killed, every request answered by the same
/// scripts with the fixed delays of `FakeUpstreamOptions` (speech, optionally, as long as its
/// text would be spoken), so every system under test pays the same upstream costs.
@main
struct FakeUpstream {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains("--help") {
            print(FakeUpstreamOptions.usage)
            return
        }
        let options: FakeUpstreamOptions
        do {
            options = try FakeUpstreamOptions(arguments: arguments)
        } catch {
            FileHandle.standardError.write(Data("FakeUpstream: \(error)\n\(FakeUpstreamOptions.usage)\n".utf8))
            exit(2)
        }
        let server: FakeOpenAIServer
        do {
            server = try FakeOpenAIServer(port: options.port)
        } catch {
            FileHandle.standardError.write(Data("FakeUpstream: cannot listen on port \(options.port): \(error)\n".utf8))
            exit(1)
        }
        server.setFallback(chat: chatScript(options), transcription: .text(options.transcript, delay: .milliseconds(options.transcriptionMs)), speech: speechScript(options, audioMs: options.speechAudioMs))
        if options.speechMsPerWord > 0 {
            server.setSpeechResponder { request in
                let words = request["input"]?.stringValue?.split(separator: " ").count ?? 0
                return speechScript(options, audioMs: max(1, words) * options.speechMsPerWord)
            }
        }
        // Unbuffered, so a script reading the pipe sees the address at once.
        FileHandle.standardOutput.write(Data("listening on \(server.baseURL.absoluteString)\n".utf8))
        while true { try? await Task.sleep(for: .seconds(3_600)) }
    }

    /// The reply streamed one word per chunk: the first after `firstTokenMs`, then at the token rate.
    static func chatScript(_ options: FakeUpstreamOptions) -> FakeChatScript {
        let words = options.reply.split(separator: " ")
        let tokens = words.enumerated().map { $0.offset == 0 ? String($0.element) : " " + $0.element }
        var script = FakeChatScript.text(tokens, usage: TokenUsage(promptTokens: 10, completionTokens: tokens.count))
        script.timeToFirstChunk = .milliseconds(options.firstTokenMs)
        if options.tokensPerSecond > 0 { script.interChunkDelay = .seconds(1 / options.tokensPerSecond) }
        return script
    }

    /// `audioMs` of a quiet 220 Hz tone (audible, so nothing downstream takes it for silence),
    /// sent in `speechChunkMs` pieces after `speechFirstByteMs`.
    static func speechScript(_ options: FakeUpstreamOptions, audioMs: Int) -> FakeSpeechScript {
        let rate = Double(options.speechSampleRate)
        let samples = (0..<(audioMs * options.speechSampleRate / 1000)).map { Int16(6_000 * sin(2 * Double.pi * 220 * Double($0) / rate)) }
        return .samples(
            samples,
            pieceBytes: options.speechSampleRate * options.speechChunkMs / 1000 * 2,
            timeToFirstByte: .milliseconds(options.speechFirstByteMs)
        )
    }
}
