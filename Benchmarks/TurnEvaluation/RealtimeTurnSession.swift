import Foundation
import ParleyCore
import ParleyNet

/// One realtime WebSocket session of the harness: a microphone that sends 24 kHz pcm16 in
/// 20 ms `input_audio_buffer.append` chunks, each when a real microphone would deliver it,
/// and the log of what the server said. Audio time is counted in chunks sent, so every time
/// the harness compares is audio time, as the server's `audio_start_ms` / `audio_end_ms` are.
final class RealtimeTurnSession {
    /// The protocol's rate.
    static let sampleRate = 24_000
    /// 20 ms at 24 kHz.
    static let chunkLength = 480

    let log = RealtimeEventLog()
    private let connection: WebSocketConnection
    private let listener: Task<Void, Never>
    private var next = ContinuousClock.now
    /// Chunks sent so far.
    private(set) var chunksSent = 0
    /// When each chunk was sent.
    private(set) var sentAt: [ContinuousClock.Instant] = []
    /// The agent's audio as received, played back (attenuated) into the microphone from the
    /// first delta on, at the pace it would play; `nil` when nothing leaks back.
    private var echo: (gain: Float, played: Int)?

    /// Opens a session at `url` (with `?parley_events=true`) and applies `session` (the
    /// `session` object of a `session.update`, as JSON text).
    /// - Throws: `TurnHarnessFailure` when the server refuses the settings.
    init(url: URL, secret: String, session: String) async throws {
        connection = try await WebSocketClient.connect(to: url, headers: ["Authorization": "Bearer \(secret)"])
        let log = self.log
        let connection = self.connection
        listener = Task {
            for await message in connection.messages {
                if case .text(let text) = message { log.record(text) }
            }
            log.close()
        }
        try connection.send(.text(#"{"type":"session.update","session":\#(session)}"#))
        let answer = await log.wait(for: .seconds(10)) { ["session.updated", "error"].contains($0["type"]?.stringValue) }
        guard answer?["type"]?.stringValue == "session.updated" else {
            close()
            throw TurnHarnessFailure("session.update refused: \(answer?.jsonText ?? "no answer")")
        }
        next = ContinuousClock.now
    }

    /// Audio time sent so far, in milliseconds.
    var sentMs: Int { chunksSent * 20 }

    /// Mixes the agent's received audio back into what is sent, `gainDB` below its level.
    func leakAgentAudio(gainDB: Int) { echo = (pow(10, Float(gainDB) / 20), 0) }

    /// Sends `samples` (24 kHz) paced in real time, padding the last chunk with silence.
    func send(_ samples: [Float]) async throws {
        for start in stride(from: 0, to: samples.count, by: Self.chunkLength) {
            var chunk = Array(samples[start..<min(start + Self.chunkLength, samples.count)])
            chunk += [Float](repeating: 0, count: Self.chunkLength - chunk.count)
            try await sendChunk(chunk)
        }
    }

    /// Sends `milliseconds` of silence (a multiple of 20), paced.
    func sendSilence(milliseconds: Int) async throws {
        for _ in 0..<max(milliseconds / 20, 0) { try await sendChunk([Float](repeating: 0, count: Self.chunkLength)) }
    }

    /// Sends silence until `isDone`, or until `limitMs` of it were sent.
    /// - Returns: whether `isDone` became true.
    func sendSilence(untilMs limitMs: Int, _ isDone: () -> Bool) async throws -> Bool {
        var sent = 0
        while !isDone() {
            guard sent < limitMs else { return false }
            try await sendChunk([Float](repeating: 0, count: Self.chunkLength))
            sent += 20
        }
        return true
    }

    /// Sends a client event (JSON text).
    func sendEvent(_ json: String) throws { try connection.send(.text(json)) }

    /// Sends `samples` as fast as the socket takes them, in 100 ms appends (no pacing).
    func append(_ samples: [Float]) throws {
        let pcm = SampleConversion.pcm16(samples)
        for start in stride(from: 0, to: pcm.count, by: 2_400) {
            let audio = PCM16Buffer(samples: Array(pcm[start..<min(start + 2_400, pcm.count)])).base64EncodedString()
            try connection.send(.text(#"{"type":"input_audio_buffer.append","audio":"\#(audio)"}"#))
        }
    }

    func close() {
        connection.close()
        listener.cancel()
    }

    private func sendChunk(_ chunk: [Float]) async throws {
        var chunk = chunk
        if let echo, let leak = agentAudio(from: echo.played, count: chunk.count) {
            for index in chunk.indices { chunk[index] += echo.gain * leak[index] }
            self.echo?.played += chunk.count
        }
        next += .milliseconds(20)
        try await Task.sleep(until: next, clock: .continuous)
        let audio = PCM16Buffer(samples: SampleConversion.pcm16(chunk)).base64EncodedString()
        try connection.send(.text(#"{"type":"input_audio_buffer.append","audio":"\#(audio)"}"#))
        chunksSent += 1
        sentAt.append(.now)
    }

    /// `count` samples of the agent's received audio from sample `start`, zero-padded; `nil`
    /// before the first delta arrived.
    private func agentAudio(from start: Int, count: Int) -> [Float]? {
        let deltas = log.all("response.output_audio.delta")
        guard !deltas.isEmpty else { return nil }
        var samples: [Float] = []
        for delta in deltas {
            guard let base64 = delta["delta"]?.stringValue, let audio = try? PCM16Buffer(base64: base64) else { continue }
            samples += SampleConversion.float(audio.samples)
            if samples.count >= start + count { break }
        }
        let available = samples.count > start ? Array(samples[start..<min(start + count, samples.count)]) : []
        return available + [Float](repeating: 0, count: count - available.count)
    }
}

/// The harness could not run a clip.
public struct TurnHarnessFailure: Error, CustomStringConvertible {
    public var description: String
    /// A failure saying `description`.
    public init(_ description: String) { self.description = description }
}
