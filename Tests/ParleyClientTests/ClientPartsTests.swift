import Foundation
@testable import ParleyClient
import ParleyCore
import Testing

@Suite struct ClientPartsTests {
    @Test(arguments: [
        (#"{"type":"response.done","event_id":"event_abc123","response":{}}"#, "event_abc123"),
        (#"{"event_id" : "evt_1","type":"error"}"#, "evt_1"),
        (#"{"type":"error","event_id":"a\"b"}"#, nil),
        (#"{"type":"error"}"#, nil),
        (#"{"type":"error","event_id":""}"#, nil),
        (#"{"type":"x","event_id":17}"#, nil),
        ("{\"type\":\"" + String(repeating: "x", count: 300) + "\",\"event_id\":\"late\"}", nil),
    ] as [(String, String?)])
    func eventIDsAreReadFromTheStartOfTheMessage(text: String, expected: String?) {
        #expect(EventIDScanner.eventID(in: text) == expected)
    }

    @Test func base64AudioIsMeasuredWithoutDecoding() {
        for count in [0, 1, 2, 3, 4800] {
            let text = PCM16Buffer(samples: [Int16](repeating: 7, count: count)).base64EncodedString()
            #expect(SpokenAudioMarks.sampleCount(ofBase64: text) == count)
        }
    }

    @Test func heardTextFollowsTheChunkThatWasPlaying() {
        var marks = SpokenAudioMarks()
        marks.record(sampleCount: 24_000, textLength: 10)
        marks.record(sampleCount: 24_000, textLength: 25)
        #expect(marks.heardTextLength(playedMilliseconds: 0) == 0)
        #expect(marks.heardTextLength(playedMilliseconds: 1) == 10)
        #expect(marks.heardTextLength(playedMilliseconds: 1000) == 10)
        #expect(marks.heardTextLength(playedMilliseconds: 1001) == 25)
    }

    @Test func serverURLsBecomeRealtimeEndpoints() {
        #expect(RealtimeClient.Configuration(server: URL(string: "http://127.0.0.1:8080")!).url.absoluteString == "ws://127.0.0.1:8080/v1/realtime?parley_events=true")
        #expect(RealtimeClient.Configuration(server: URL(string: "https://parley.example/base/")!, agentID: "agent 1").url.absoluteString
            == "wss://parley.example/base/v1/realtime?parley_events=true&agent=agent%201")
        #expect(RealtimeClient.Configuration(server: URL(string: "http://h")!, instanceID: "inst_1").url.absoluteString
            == "ws://h/v1/realtime?parley_events=true&instance=inst_1")
    }

    @Test func tokensAreReusedOnlyWellBeforeTheyExpire() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(RealtimeToken(value: "t", expiresAt: now.addingTimeInterval(120)).isUsable(now: now, margin: 60))
        #expect(!RealtimeToken(value: "t", expiresAt: now.addingTimeInterval(30)).isUsable(now: now, margin: 60))
        #expect(!RealtimeToken(value: "t").isUsable(now: now, margin: 60))
    }

    #if !canImport(Darwin)
    @Test func refusedHandshakesReportTheirHTTPStatus() {
        #expect(LibWebsocketsRealtimeSocket.httpStatus(in: "HS: ACCEPT missing (HTTP 401)") == 401)
        #expect(LibWebsocketsRealtimeSocket.httpStatus(in: "connection refused") == nil)
    }
    #endif

    @Test func eventsGetTheirIDWithoutChangingOtherwise() {
        let events: [RealtimeClientEvent] = [
            .inputAudioBufferCommit(), .responseCancel(responseID: "resp_1"),
            .conversationItemTruncate(itemID: "item_1", contentIndex: 0, audioEndMs: 1500),
        ]
        for event in events {
            let stamped = event.withEventID("evt_9")
            #expect(stamped.eventID == "evt_9")
            #expect(stamped.typeName == event.typeName)
            #expect(stamped.encode(dialect: .ga).contains(#""event_id":"evt_9""#))
        }
    }
}

/// The model's handling of events without a server: duplicates by `event_id` are dropped
/// before anything (playback included) happens twice.
@MainActor
@Suite struct ConversationModelEventTests {
    private func makeIdleModel(_ audio: FakeConversationAudio) -> ConversationModel {
        let client = RealtimeClient(
            configuration: .init(url: URL(string: "ws://127.0.0.1:9/v1/realtime")!), token: { RealtimeToken(value: "unused") }
        )
        return ConversationModel(client: client, audio: audio)
    }

    @Test func aRepeatedEventIsAppliedOnce() {
        let audio = FakeConversationAudio()
        let model = makeIdleModel(audio)
        let position = RealtimeContentPosition(responseID: "resp_1", itemID: "item_a")
        let sound = PCM16Buffer(samples: [Int16](repeating: 1, count: 2400)).base64EncodedString()
        for _ in 0..<2 {
            model.handle(.event(.responseOutputAudioTranscriptDelta(position, delta: "Hi"), eventID: "event_1"))
            model.handle(.event(.responseOutputAudioDelta(position, delta: sound), eventID: "event_2"))
        }
        #expect(model.messages.map(\.text) == ["Hi"])
        #expect(audio.record.queuedSamples["item_a"] == 2400)
        #expect(model.diagnostics.duplicateEvents == 2)
    }

    @Test func connectionProblemsAreExplainedWithTheRetry() {
        let model = makeIdleModel(FakeConversationAudio())
        model.handle(.disconnected(.unreachable("connection refused"), retryIn: .milliseconds(1600)))
        #expect(model.status == .disconnected)
        #expect(model.error?.kind == .connection)
        #expect(model.error?.message == "Can't reach the Parley server: connection refused Reconnecting in 2 s…")
        model.handle(.disconnected(.tokenUnavailable("This server does not hand out local tokens."), retryIn: nil))
        #expect(model.status == .failed)
        #expect(model.error?.message == "Could not get a token to connect: This server does not hand out local tokens.")
    }
}
