@testable import ParleyRTC
import Testing

/// A call's outgoing speech queue: when a response starts and stops, and what it sent.
@Suite struct OutgoingAudioTests {
    private func frame(_ responseID: String, item: String = "item") -> RTCOutgoingAudio.Frame {
        .init(packet: [0], responseID: responseID, itemID: item)
    }

    /// Speech made slower than it plays runs the queue dry mid-answer: the answer has not
    /// stopped (no `output_audio_buffer.stopped`, the page would stop treating it as playing),
    /// and the milliseconds it sent keep counting for the heard-text rule.
    @Test func anAnswerThatFallsBehindKeepsPlayingUntilItsSpeechIsComplete() {
        var audio = RTCOutgoingAudio()
        audio.append(frame("r1"))
        #expect(audio.takeFrame()?.starts == "r1")
        #expect(audio.takeFrame() == nil)
        #expect(audio.finishPlaying() == nil)

        audio.append(frame("r1"))
        let resumed = audio.takeFrame()
        #expect(resumed?.starts == nil && resumed?.stops == nil)
        audio.finish(responseID: "r1")
        #expect(audio.takeFrame() == nil)
        #expect(audio.finishPlaying() == "r1")
        #expect(audio.finishPlaying() == nil)
    }

    @Test func clearingReportsEverythingTheItemSentAcrossAGap() {
        var audio = RTCOutgoingAudio()
        audio.append(frame("r1"))
        _ = audio.takeFrame()
        #expect(audio.finishPlaying() == nil)
        audio.append(frame("r1"))
        audio.append(frame("r1"))
        _ = audio.takeFrame()
        #expect(audio.clear() == RTCSentAudio(responseID: "r1", itemID: "item", sentMilliseconds: 40))
        #expect(audio.finishPlaying() == nil)
    }

    /// Speech over the agent holds its audio while the session weighs it: nothing goes out,
    /// the answer has not stopped, and a backchannel lets it go on from where it was held.
    @Test func aHeldAnswerSendsNothingAndGoesOnWhereItWasHeld() {
        var audio = RTCOutgoingAudio()
        audio.append(frame("r1"))
        audio.append(frame("r1"))
        audio.finish(responseID: "r1")
        #expect(audio.takeFrame()?.starts == "r1")
        audio.pause()
        #expect(audio.takeFrame() == nil)
        #expect(audio.finishPlaying() == nil)
        audio.resume()
        #expect(audio.takeFrame() != nil)
        #expect(audio.takeFrame() == nil)
        #expect(audio.finishPlaying() == "r1")
    }

    /// A real interruption clears a held answer: what it sent before the hold is what was heard,
    /// and the next answer is not held.
    @Test func clearingAHeldAnswerCountsWhatWentOutBeforeTheHold() {
        var audio = RTCOutgoingAudio()
        for _ in 0..<3 { audio.append(frame("r1")) }
        _ = audio.takeFrame()
        audio.pause()
        #expect(audio.takeFrame() == nil)
        #expect(audio.clear() == RTCSentAudio(responseID: "r1", itemID: "item", sentMilliseconds: 20))
        audio.append(frame("r2"))
        #expect(audio.takeFrame()?.starts == "r2")
    }

    @Test func theNextResponseStopsThePreviousOne() {
        var audio = RTCOutgoingAudio()
        audio.append(frame("r1"))
        audio.append(frame("r2"))
        #expect(audio.takeFrame()?.starts == "r1")
        let next = audio.takeFrame()
        #expect(next?.stops == "r1" && next?.starts == "r2")
        audio.finish(responseID: "r2")
        #expect(audio.takeFrame() == nil)
        #expect(audio.finishPlaying() == "r2")
    }
}
