import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// `parley eval` scenarios under the server's turn detection (`"turn_detection": "server_vad"`)
/// against a real server on a free port: the caller streams flite speech, the Silero VAD ends
/// its turns, and speech over a reply is judged by the server's interruption policy: a
/// backchannel lets the reply go on, real words cut it. Replies are scripted, and the words
/// heard are told by the speech's length.
@Suite("parley eval under server turn detection")
struct EvalServerTurnDetectionTests {
    /// A reply of 41 words, 4.1 s of audio from the scripted synthesizer.
    static let story = Array(repeating: "and then", count: 20).joined(separator: " ") + " done."

    /// Hears speech under 0.8 s as `short`, longer speech as `long`, however often the server
    /// transcribes it (partials, pauses, the interruption judge): flite's "Okay." is short, a
    /// sentence long.
    struct LengthRecognizer: SpeechRecognizer {
        var short: String
        var long: String
        let sampleRate = 16_000
        let supportsPartials = false

        func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
            let seconds = Double(samples.count) / Double(sampleRate)
            return Transcription(text: seconds < 0.8 ? short : long, audioDuration: seconds, processingDuration: 0, wordConfidences: nil)
        }
    }

    @Test("a backchannel over the reply: the server keeps talking, the reply runs to its end, no turn is made of it")
    func backchannelKeepsTheReply() async throws {
        let fixture = try await EvalCommandTests.Fixture.start(
            ScriptedLanguageModel(replies: [.text(Self.story)]), hearing: LengthRecognizer(short: "Okay.", long: "Tell me a long story."), sileroVAD: true
        )
        defer { Task { await fixture.stop() } }
        try fixture.write("backchannel.json", """
            [{"name": "keeps talking over okay", "turn_detection": "server_vad", "turns": [
              {"say": "Tell me a long story.", "voice": "flite", "expect": {"interrupted": false, "reply_contains": "done"}},
              {"backchannel": "Okay.", "after_reply_ms": 800, "voice": "flite"}
            ]}]
            """)
        let run = await fixture.eval(["backchannel.json", "--json", "report.json"])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        let turns = try fixture.reportedTurns("report.json")
        #expect(turns.first?["heard"] == .string("Tell me a long story."))
        #expect(turns.first?["interrupted"] == .bool(false))
        #expect(turns.first?["response_status"] == .string("completed"))
        #expect(turns.first?["interruption"]?["interrupts"] == .bool(false), "\(turns.first?.jsonText ?? "")")
        #expect(turns.first?["interruption"]?["reason"] == .string("backchannel"))
        #expect((turns.first?["timings"]?["reply_audio_ms"]?.numberValue ?? 0) >= 4_000, "the whole reply arrived")
        #expect(turns.last?["kind"] == .string("backchannel"))
        #expect(turns.last?["heard"] == .string("Okay."), "the words the server judged")
    }

    @Test("real words over the reply under server_vad: the server cuts it and answers the new turn")
    func interruptionCutsTheReply() async throws {
        let fixture = try await EvalCommandTests.Fixture.start(
            ScriptedLanguageModel(replies: [.text(Self.story), .text("Sorry, stopping.")]),
            hearing: LengthRecognizer(short: "Okay.", long: "Stop and tell me something else."), sileroVAD: true
        )
        defer { Task { await fixture.stop() } }
        try fixture.write("interrupt.json", """
            [{"name": "stops when interrupted", "turn_detection": "server_vad", "turns": [
              {"text": "Tell me a long story.", "expect": {"interrupted": true}},
              {"interrupt": "Stop and tell me something else.", "after_reply_ms": 800, "voice": "flite",
               "expect": {"reply_contains": "stopping", "interrupted": false}}
            ]}]
            """)
        let run = await fixture.eval(["interrupt.json", "--json", "report.json"])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        let turns = try fixture.reportedTurns("report.json")
        #expect(turns.first?["interrupted"] == .bool(true))
        #expect(turns.first?["interruption"]?["interrupts"] == .bool(true), "\(turns.first?.jsonText ?? "")")
        let sent = turns.first?["timings"]?["reply_audio_ms"]?.numberValue ?? 0
        #expect(sent < 4_000, "the rest of the reply was not sent: \(sent) ms of 4,100 arrived")
        #expect(turns.last?["heard"] == .string("Stop and tell me something else."))
        #expect(turns.last?["reply"] == .string("Sorry, stopping."))
    }

    @Test("the same backchannel under push-to-talk is refused with the line and the field")
    func backchannelNeedsServerTurnDetection() async throws {
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try """
            {"scenarios": [{"name": "a", "turns": [
              {"text": "Tell me a story."},
              {"backchannel": "Mm-hmm.", "after_reply_ms": 800}
            ]}]}
            """.write(toFile: work.path("ptt.json"), atomically: true, encoding: .utf8)
        #expect(throws: ScenarioFileError.self) { try ScenarioDecoder.read("ptt.json", relativeTo: work.url) }
        do {
            _ = try ScenarioDecoder.read("ptt.json", relativeTo: work.url)
        } catch {
            #expect(error.description == #"ptt.json:3: scenarios[0].turns[1].backchannel: needs the scenario's "turn_detection": "server_vad" (under push-to-talk speech over a reply does nothing)"#)
        }
    }
}
