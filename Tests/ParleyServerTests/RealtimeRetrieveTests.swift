import Foundation
import ParleyCore
import Testing

/// `conversation.item.retrieve` answers for every item a client was told about, as it is now:
/// a reply still being spoken, a reply truncated before a word was heard, a turn still being
/// transcribed (openai-agents retrieves the assistant item after every truncate).
@Suite struct RealtimeRetrieveTests {
    @Test func aReplyIsRetrievedWhileSpokenAndAfterBeingCutToNothing() async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        try client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"Tell me a long story"}]}}"#)
        try client.send(#"{"type":"response.create"}"#)
        let itemID = try #require(await client.next("response.output_audio.delta")?["item_id"]?.stringValue)

        try client.send(#"{"type":"conversation.item.retrieve","item_id":"\#(itemID)"}"#)
        let speaking = await client.next("conversation.item.retrieved")
        #expect(speaking?["item"]?["id"]?.stringValue == itemID)
        #expect(speaking?["item"]?["status"]?.stringValue == "in_progress")

        try client.send(#"{"type":"conversation.item.truncate","item_id":"\#(itemID)","content_index":0,"audio_end_ms":0}"#)
        #expect(await client.next("conversation.item.truncated") != nil)
        try client.send(#"{"type":"response.cancel"}"#)
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "cancelled")
        try client.send(#"{"type":"conversation.item.retrieve","item_id":"\#(itemID)"}"#)
        let cut = await client.next("conversation.item.retrieved")
        #expect(cut?["item"]?["status"]?.stringValue == "incomplete", "\(cut?.jsonText ?? "nothing")")
        guard case .array(let content)? = cut?["item"]?["content"] else {
            Issue.record("no content in \(cut?.jsonText ?? "nothing")")
            return
        }
        #expect(content.first?["transcript"]?.stringValue == "")
        #expect(await client.events.allSatisfy { $0["type"]?.stringValue != "error" })
        client.socket.close()
        await server.stop()
    }
}
