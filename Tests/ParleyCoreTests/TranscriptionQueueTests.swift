import Testing
@testable import ParleyCore

/// Committed utterances are transcribed one at a time, in order, and a response asked for
/// meanwhile waits for all of them: the queue's decisions, no session, no recognizer.
@Suite struct TranscriptionQueueTests {
    private static func utterance(_ itemID: String, committedAtMs: Int, transcript: String? = nil) -> TranscriptionQueue.Utterance {
        TranscriptionQueue.Utterance(
            itemID: itemID, samples: [], committedAt: .milliseconds(committedAtMs), createsResponse: true, preemptive: nil,
            finished: transcript.map { Transcription(text: $0, audioDuration: 1, processingDuration: 0) }
        )
    }

    /// The item to transcribe, when `action` asks for a transcription.
    private static func transcribed(_ action: TranscriptionQueue.Action?) -> String? {
        if case .transcribe(let utterance)? = action { utterance.itemID } else { nil }
    }

    @Test func utterancesAreTranscribedOneAtATimeInTheOrderTheyWereCommitted() {
        var queue = TranscriptionQueue()
        let first = Self.utterance("item_1", committedAtMs: 1_000)
        let second = Self.utterance("item_2", committedAtMs: 2_000)
        queue.add(first)
        queue.add(second)
        #expect(Self.transcribed(queue.next()) == "item_1")
        #expect(queue.next() == nil, "one at a time")
        #expect(!queue.isIdle)
        queue.finished(first)
        #expect(Self.transcribed(queue.next()) == "item_2")
        queue.finished(second)
        #expect(queue.next() == nil)
        #expect(queue.isIdle)
    }

    @Test func aTranscriptKnownAtCommitIsTakenAtOnce() {
        var queue = TranscriptionQueue()
        queue.add(Self.utterance("item_1", committedAtMs: 1_000, transcript: "What time is it?"))
        guard case .takeTranscript(let utterance, let transcription)? = queue.next() else {
            Issue.record("expected the known transcript")
            return
        }
        #expect(utterance.itemID == "item_1" && transcription.text == "What time is it?")
    }

    @Test func aResponseAskedForWhileNothingWaitsStartsNow() {
        var queue = TranscriptionQueue()
        let held = queue.holdResponse(id: "resp_1", request: ResponseRequest())
        #expect(!held)
        #expect(queue.waitingResponse == nil)
    }

    @Test func aResponseAskedForAfterACommitStartsOnceEveryTranscriptIsIn() {
        var queue = TranscriptionQueue()
        let first = Self.utterance("item_1", committedAtMs: 1_000)
        let second = Self.utterance("item_2", committedAtMs: 2_000)
        queue.add(first)
        queue.add(second)
        _ = queue.next()
        let held = queue.holdResponse(id: "resp_1", request: ResponseRequest())
        #expect(held)
        queue.finished(first)
        #expect(Self.transcribed(queue.next()) == "item_2", "the second transcript comes before the response")
        queue.finished(second)
        guard case .startResponse(let response, let committedAt)? = queue.next() else {
            Issue.record("expected the waiting response")
            return
        }
        #expect(response.id == "resp_1")
        #expect(committedAt == .milliseconds(2_000), "its latency counts from the last commit")
        #expect(queue.next() == nil)
        #expect(queue.waitingResponse == nil)
    }

    @Test func theWaitingResponseCanBeCancelled() {
        var queue = TranscriptionQueue()
        let first = Self.utterance("item_1", committedAtMs: 1_000)
        queue.add(first)
        _ = queue.next()
        let held = queue.holdResponse(id: "resp_1", request: ResponseRequest())
        #expect(held)
        let droppedOther = queue.dropWaitingResponse(id: "resp_other")
        let dropped = queue.dropWaitingResponse(id: "resp_1")
        #expect(!droppedOther && dropped)
        queue.finished(first)
        #expect(queue.next() == nil)
    }

    @Test func removingAllForgetsTheUtterancesAndTheWaitingResponse() {
        var queue = TranscriptionQueue()
        queue.add(Self.utterance("item_1", committedAtMs: 1_000))
        queue.add(Self.utterance("item_2", committedAtMs: 2_000))
        let first = queue.next()
        let held = queue.holdResponse(id: "resp_1", request: ResponseRequest())
        #expect(held)
        queue.removeAll()
        if case .transcribe(let utterance)? = first { queue.finished(utterance) }
        #expect(queue.next() == nil)
        #expect(queue.isIdle)
        #expect(queue.waitingResponse == nil)
    }
}
