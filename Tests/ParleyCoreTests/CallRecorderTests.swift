import Foundation
import Testing
@testable import ParleyCore

/// The recording's clock and mixing (`StereoTimeline`) as tables, and the file the recorder
/// writes: valid after every write, continued by a later session, repaired after a torn write.
@Suite("Call recorder")
struct CallRecorderTests {
    static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("parley-recorder-\(UUID().uuidString).wav")
    }

    static func recorder(_ url: URL) throws -> CallRecorder {
        try CallRecorder(url: url, makeResampler: VoiceSessionProviders.sincResampler)
    }

    /// Left and right samples of interleaved frames.
    static func split(_ frames: [Int16]) -> (left: [Int16], right: [Int16]) {
        (stride(from: 0, to: frames.count, by: 2).map { frames[$0] }, stride(from: 1, to: frames.count, by: 2).map { frames[$0] })
    }

    @Test("agent audio plays from when it was sent, after the audio before it, and waits for the user's clock")
    func agentAudioFollowsTheUsersClock() {
        var timeline = StereoTimeline(sampleRate: 1_000)
        #expect(Self.split(timeline.appendUser([1, 1, 1])).right == [0, 0, 0])
        timeline.appendAgent([7, 7], itemID: "a")
        timeline.appendAgent([8, 8], itemID: "a")
        // Nothing is written ahead of the user's audio.
        #expect(timeline.pendingAgentFrames == 4)
        let next = Self.split(timeline.appendUser([2, 2, 2]))
        #expect(next.left == [2, 2, 2])
        #expect(next.right == [7, 7, 8])
        #expect(Self.split(timeline.appendUser([3])).right == [8])
        // Sent after a gap: starts at the clock, not right after the previous audio.
        _ = timeline.appendUser([0, 0])
        timeline.appendAgent([9], itemID: "b")
        #expect(Self.split(timeline.appendUser([4, 4])).right == [9, 0])
        #expect(timeline.userFrames == 11)
    }

    @Test("push-to-talk: the reply waiting is laid before the user's next audio")
    func pushToTalk() {
        var timeline = StereoTimeline(sampleRate: 1_000)
        _ = timeline.appendUser([1, 1], afterAgent: true)
        timeline.appendAgent([7, 7, 7], itemID: "a")
        let next = Self.split(timeline.appendUser([2], afterAgent: true))
        #expect(next.left == [0, 0, 0, 2])
        #expect(next.right == [7, 7, 7, 0])
    }

    @Test("a cut keeps what was heard, also of audio that arrives after it; the rest plays out at the end")
    func cutsAndDrain() {
        var timeline = StereoTimeline(sampleRate: 1_000)
        timeline.appendAgent([1, 2, 3, 4, 5], itemID: "a")
        _ = timeline.appendUser([0, 0])
        timeline.cutAgent(itemID: "a", afterMilliseconds: 3)
        timeline.appendAgent([6, 7], itemID: "a")
        timeline.appendAgent([8, 9], itemID: "b")
        let rest = Self.split(timeline.appendUser([0, 0, 0]) + timeline.drainAgent())
        // Item a: [1, 2] already played, [3] heard, [4, 5, 6, 7] never heard; item b follows.
        #expect(rest.right == [3, 8, 9])
        #expect(rest.left == [0, 0, 0])
        #expect(timeline.drainAgent().isEmpty)
    }

    @Test("the file is a valid WAV after every write, before it is finished (a crash loses nothing written)")
    func validWithoutFinishing() async throws {
        let url = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        let recorder = try Self.recorder(url)
        recorder.recordUser([Int16](repeating: 1_000, count: 2_400), sampleRate: 24_000)
        recorder.recordAgent([Int16](repeating: 2_000, count: 1_200), sampleRate: 24_000, itemID: "item_1")
        recorder.recordUser([Int16](repeating: 1_000, count: 2_400), sampleRate: 24_000)
        await recorder.written()

        let wav = try WAVFile.read(Data(contentsOf: url))
        #expect(wav.format == AudioFormat(sampleRate: 24_000, channelCount: 2))
        #expect(wav.samples.count == 2 * 4_800)
        let right = stride(from: 1, to: wav.samples.count, by: 2).map { wav.samples[$0] }
        #expect(right[2_400..<3_600].allSatisfy { abs($0 - 2_000.0 / 32_768) < 0.001 })
        #expect(right[3_600...].allSatisfy { $0 == 0 })
        recorder.finish()
        await recorder.finished()
    }

    @Test("a later session continues the file; a torn last frame is dropped and the header repaired")
    func continuesAndRepairs() async throws {
        let url = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        let first = try Self.recorder(url)
        first.recordUser([Int16](repeating: 500, count: 2_400), sampleRate: 24_000)
        first.finish()
        await first.finished()
        // The process died after writing 3 bytes of a frame, before the header update.
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([1, 2, 3]))
        try handle.close()

        // 8 kHz input is resampled to the recording's 24 kHz.
        let second = try Self.recorder(url)
        second.recordUser([Int16](repeating: 500, count: 800), sampleRate: 8_000)
        second.finish()
        await second.finished()
        let wav = try WAVFile.read(Data(contentsOf: url))
        #expect(abs(wav.samples.count / 2 - 4_800) <= 48)
    }

    @Test("a file that is not a recording of this format is left alone")
    func refusesForeignFiles() throws {
        let url = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        try WAVFile.pcm16Data(samples: [1, 2, 3], format: AudioFormat(sampleRate: 16_000)).write(to: url)
        #expect(throws: RecordingError.self) { try Self.recorder(url) }
        #expect(try Data(contentsOf: url).count == 50)
    }
}
