import Foundation
import ParleyCore
import ParleyTesting
import Testing

@testable import ParleyServer

/// `OutputPacing`: a WebSocket client's speech arrives in real time plus a lead, events keep
/// their order behind it, the session's hold stops it, and a cancellation drops what is left.
@Suite struct OutputPacingTests {
    @Test func speechWithinTheLeadGoesAtOnceAndTheRestWhenTheClientHasPlayedEnough() {
        var pacing = OutputPacing(leadMs: 200)
        #expect(pacing.enqueue(.init(text: "created", audioMs: 0), nowMs: 0).messages == ["created"])
        #expect(pacing.enqueue(.init(text: "a1", audioMs: 100), nowMs: 0).messages == ["a1"])
        #expect(pacing.enqueue(.init(text: "a2", audioMs: 100), nowMs: 0).messages == ["a2"])
        let held = pacing.enqueue(.init(text: "a3", audioMs: 100), nowMs: 0)
        #expect(held.messages.isEmpty)
        // The client holds 200 ms until it has played 100 of them.
        #expect(held.wakeAtMs == 100)
        #expect(pacing.release(nowMs: 99.9).messages.isEmpty)
        #expect(pacing.release(nowMs: 100).messages == ["a3"])
    }

    @Test func eventsBehindHeldSpeechWaitForItSoNothingOvertakes() {
        var pacing = OutputPacing(leadMs: 200)
        _ = pacing.enqueue(.init(text: "a1", audioMs: 200), nowMs: 0)
        _ = pacing.enqueue(.init(text: "a2", audioMs: 100), nowMs: 0)
        #expect(pacing.enqueue(.init(text: "transcript delta", audioMs: 0), nowMs: 0).messages.isEmpty)
        #expect(pacing.enqueue(.init(text: "response.done", audioMs: 0), nowMs: 0).messages.isEmpty)
        #expect(pacing.release(nowMs: 100).messages == ["a2", "transcript delta", "response.done"])
        #expect(!pacing.hasWaitingMessages)
    }

    @Test func eventsOutsideTheResponseGoAheadOfHeldSpeech() {
        var pacing = OutputPacing(leadMs: 200)
        _ = pacing.enqueue(.init(text: "a1", audioMs: 300), nowMs: 0)
        _ = pacing.enqueue(.init(text: "a2", audioMs: 100), nowMs: 0)
        let retrieved = OutputPacing.Message(text: "conversation.item.retrieved", audioMs: 0, followsSpeech: false)
        #expect(pacing.enqueue(retrieved, nowMs: 0).messages == ["conversation.item.retrieved"])
        #expect(pacing.hasWaitingMessages)
    }

    @Test func theHoldStopsSpeechButNotTheEventsBeforeIt() {
        var pacing = OutputPacing(leadMs: 200)
        _ = pacing.enqueue(.init(text: "a1", audioMs: 100), nowMs: 0)
        pacing.pause()
        #expect(pacing.enqueue(.init(text: "speech event", audioMs: 0), nowMs: 10).messages == ["speech event"])
        #expect(pacing.enqueue(.init(text: "a2", audioMs: 100), nowMs: 10).messages.isEmpty)
        #expect(pacing.release(nowMs: 5_000).messages.isEmpty)
        // Let go again (a backchannel): the speech goes on where it stopped.
        #expect(pacing.resume(nowMs: 5_000).messages == ["a2"])
    }

    @Test func aCancellationDropsTheSpeechNotSentAndReleasesTheEventsBehindIt() {
        var pacing = OutputPacing(leadMs: 200)
        for index in 1...10 { _ = pacing.enqueue(.init(text: "a\(index)", audioMs: 100), nowMs: 0) }
        pacing.pause()
        _ = pacing.enqueue(.init(text: "speech_started", audioMs: 0), nowMs: 0)
        _ = pacing.enqueue(.init(text: "response.done cancelled", audioMs: 0), nowMs: 0)
        #expect(pacing.dropSpeech(nowMs: 300).messages == ["speech_started", "response.done cancelled"])
        #expect(!pacing.hasWaitingMessages)
        #expect(!pacing.isPaused)
    }

    @Test func afterAGapTheClientHasPlayedOutAndTheNextSpeechGoesAtOnce() {
        var pacing = OutputPacing(leadMs: 200)
        _ = pacing.enqueue(.init(text: "a1", audioMs: 200), nowMs: 0)
        #expect(pacing.enqueue(.init(text: "b1", audioMs: 200), nowMs: 10_000).messages == ["b1"])
        #expect(pacing.enqueue(.init(text: "b2", audioMs: 100), nowMs: 10_000).wakeAtMs == 10_100)
    }

    @Test(arguments: [(RealtimeAudioFormat.pcm16, 24_000 * 2), (.pcmu, 8_000), (.pcma, 8_000)])
    func aDeltasLengthIsReadFromItsText(format: RealtimeAudioFormat, bytesPerSecond: Int) {
        for bytes in [bytesPerSecond / 10, bytesPerSecond / 10 + 2, bytesPerSecond] {
            let text = Data(count: bytes).base64EncodedString()
            let expected = Double(bytes / (format == .pcm16 ? 2 : 1)) * 1_000 / Double(format.sampleRate)
            #expect(format.milliseconds(ofBase64: text) == expected)
        }
    }

    /// A client that just plays what it gets holds little of a long reply however fast the
    /// server makes it, and a cancellation still reaches it at once.
    @Test func aLongReplyReachesAPlainClientInRealTimeAndACancellationAtOnce() async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        try client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"Tell me a long story"}]}}"#)
        try client.send(#"{"type":"response.create"}"#)
        let itemID = try #require(await client.next("response.output_audio.delta")?["item_id"]?.stringValue)
        // Wait until the server has made at least 40 sentences (about 36 s of speech).
        let deadline = ContinuousClock.now + TestDeadline.seconds(60)
        var made = 0
        while made < 40, ContinuousClock.now < deadline {
            try client.send(#"{"type":"conversation.item.retrieve","item_id":"\#(itemID)"}"#)
            let retrieved = await client.next("conversation.item.retrieved")
            guard case .array(let content)? = retrieved?["item"]?["content"] else { break }
            let transcript = content.first?["transcript"]?.stringValue ?? ""
            made = transcript.components(separatedBy: "of a very long story").count - 1
        }
        #expect(made >= 40)
        try client.send(#"{"type":"response.cancel"}"#)
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "cancelled")
        let events = await client.events
        let doneIndex = try #require(events.firstIndex { $0["type"]?.stringValue == "response.done" })
        let received = events[..<doneIndex].filter { $0["type"]?.stringValue == "response.output_audio.delta" }
            .compactMap { $0["delta"]?.stringValue }.map { RealtimeAudioFormat.pcm16.milliseconds(ofBase64: $0) }.reduce(0, +)
        // The server had made 36 s; the client got what it could have played, plus the lead.
        #expect(received < 20_000, "the client got \(received) ms of speech")
        #expect(!events[doneIndex...].contains { $0["type"]?.stringValue == "response.output_audio.delta" })
        client.socket.close()
        await server.stop()
    }
}
