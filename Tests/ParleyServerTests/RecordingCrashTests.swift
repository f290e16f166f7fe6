import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing

/// `parley serve` killed with SIGKILL in the middle of a recorded call: the file on disk is
/// a valid WAV holding the call up to the kill, and a restarted server serves it.
@Suite("Recordings: crash mid-call")
struct RecordingCrashTests {
    @Test("kill -9 mid-call leaves a recording readable up to the kill")
    func killedMidCall() async throws {
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-recording-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServerProcess.start(dataDirectory: directory, upstreams: upstreams, settings: ["PARLEY_RECORDINGS": "on"])
        let agent = try await ReliabilityCrashRecoveryTests.rest(server, "POST", "/v1/agents", #"{"name":"Recorded"}"#)
        let instance = try await ReliabilityCrashRecoveryTests.rest(
            server, "POST", "/v1/agents/\(agent["id"]?.stringValue ?? "")/instances", #"{"user":"ada"}"#
        )
        let instanceID = try #require(instance["id"]?.stringValue)
        let conversationID = try #require(instance["conversation_id"]?.stringValue)
        let client = try await ProcessRealtimeClient.connect(port: server.port, query: "?instance=\(instanceID)")
        #expect(await client.next("session.created") != nil)

        // 1 s quiet, then the user talks (a tone) for 2 s and the call is still going.
        let samples = RecordingTests.quiet(ms: 1_000) + RecordingTests.tone(ms: 2_000)
        for start in stride(from: 0, to: samples.count, by: 2_400) {
            let chunk = PCM16Buffer(samples: Array(samples[start..<min(start + 2_400, samples.count)]))
            try client.socket.send(.text(#"{"type":"input_audio_buffer.append","audio":"\#(chunk.base64EncodedString())"}"#))
        }
        // The server has written all 3 s (as it reports the live file) when it is killed.
        let written = await ResourceProbe.eventually(within: 30) {
            await Self.recordingBytes(server, conversationID: conversationID) >= 44 + 3 * 24_000 * 4
        }
        #expect(written)
        await server.kill9()

        let file = directory.appendingPathComponent("recordings/\(conversationID).wav")
        let wav = try WAVFile.read(Data(contentsOf: file))
        #expect(wav.format == AudioFormat(sampleRate: 24_000, channelCount: 2))
        let (left, _) = RecordingTests.channels(wav)
        #expect(left.count >= 3 * 24_000)
        #expect(abs((RecordingTests.onsets(left).first ?? 0) - 1_000) <= 20)
        #expect(RecordingTests.loudFrames(left, from: 1_000, to: 3_000) > 40_000)

        // A restarted server serves it.
        let restarted = try await ServerProcess.start(dataDirectory: directory, upstreams: upstreams)
        defer { Task { _ = await restarted.terminate() } }
        #expect(await Self.recordingBytes(restarted, conversationID: conversationID) >= 44 + 3 * 24_000 * 4)
    }

    /// The length of the recording as the server serves it (0 when it has none).
    static func recordingBytes(_ server: ServerProcess, conversationID: String) async -> Int {
        let response = try? await HTTPClient.shared.send(HTTPClient.Request(
            url: server.baseURL.appendingPathComponent("/v1/conversations/\(conversationID)/recording"), method: "GET",
            headers: ["Authorization": "Bearer \(ServerProcess.secret)", "Range": "bytes=0-43"]
        ))
        guard response?.status == 206, let range = response?.headers["content-range"], let total = range.split(separator: "/").last else { return 0 }
        return Int(total) ?? 0
    }
}
