import Foundation
import ParleyCore
import Testing
@testable import ParleyServer

/// The append fast path reads exactly what the general decoder reads, and leaves everything
/// else to it.
@Suite struct AppendEventScannerTests {
    @Test(arguments: [
        #"{"type":"input_audio_buffer.append","audio":"AAEC"}"#,
        #"{"audio":"AAEC","type":"input_audio_buffer.append"}"#,
        #" { "event_id" : "evt_1" , "type" : "input_audio_buffer.append" , "audio" : "" } "#,
        "{\n\t\"type\": \"input_audio_buffer.append\",\r\n\"audio\": \"//79/A==\",\"event_id\":\"é\"}",
    ])
    func flatAppendsReadLikeTheDecoder(text: String) throws {
        let scanned = try #require(AppendEventScanner.scan(text))
        guard case .inputAudioBufferAppend(let audio, let eventID) = try RealtimeClientEvent.decode(text, dialect: .ga) else {
            Issue.record("the decoder read another event")
            return
        }
        #expect(scanned.audio == audio)
        #expect(scanned.eventID == eventID)
    }

    @Test(arguments: [
        #"{"type":"input_audio_buffer.commit"}"#,
        #"{"type":"input_audio_buffer.append"}"#,
        #"{"type":"input_audio_buffer.append","audio":"AA\/EC"}"#,
        #"{"type":"input_audio_buffer.append","audio":"AAEC","extra":"x"}"#,
        #"{"type":"input_audio_buffer.append","audio":"AAEC","event_id":7}"#,
        #"{"type":"input_audio_buffer.append","audio":"AAEC","audio":"AAEC"}"#,
        #"{"type":"input_audio_buffer.append","type":"input_audio_buffer.append","audio":"AAEC"}"#,
        #"{"type":"input_audio_buffer.appendix","audio":"AAEC"}"#,
        #"{"type":"input_audio_buffer.append","audio":"AAEC"} x"#,
        #"{"type":"input_audio_buffer.append","audio":"AAEC""#,
        #"{"type":"input_audio_buffer.append","audio":"AAEC",}"#,
        #"["input_audio_buffer.append"]"#,
        "{\"type\":\"input_audio_buffer.append\",\"audio\":\"A\tA\"}",
        "",
    ])
    func everythingElseGoesToTheDecoder(text: String) {
        #expect(AppendEventScanner.scan(text) == nil)
    }
}
