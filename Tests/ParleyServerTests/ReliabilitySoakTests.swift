import Foundation
import ParleyCore
import ParleyNet
import ParleyOpenAI
import ParleyServer
import Testing

/// Many realtime sessions talking at once with real-time paced audio, against OpenAI providers
/// on a fake upstream, for a while: no error, no session dropped, memory flat after warm-up,
/// every socket and session gone at the end.
///
/// CI runs 20 sessions for 30 s. `scripts/reliability` runs the long soak through the
/// environment: `PARLEY_SOAK_SESSIONS`, `PARLEY_SOAK_SECONDS`, and `PARLEY_SOAK_STRICT=1`
/// (the test runs alone, so process-wide memory and descriptor counts are its own and the
/// < 5 % growth and descriptor baseline are enforced).
@Suite("Reliability: soak")
struct ReliabilitySoakTests {
    struct Settings {
        var sessions = 20
        var seconds = 30
        var strict = false

        static var current: Settings {
            let environment = ProcessInfo.processInfo.environment
            var settings = Settings()
            if let sessions = environment["PARLEY_SOAK_SESSIONS"].flatMap(Int.init) { settings.sessions = sessions }
            if let seconds = environment["PARLEY_SOAK_SECONDS"].flatMap(Int.init) { settings.seconds = seconds }
            settings.strict = environment["PARLEY_SOAK_STRICT"] == "1"
            return settings
        }
    }

    @Test("sessions with paced audio run without error, drop or leak")
    func soak() async throws {
        let settings = Settings.current
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let server = try TestServer.start(providers: upstreams.providers(
            key: "sk-soak", timeouts: OpenAITimeouts(firstOutput: .seconds(10), idle: .seconds(10)), retry: .none
        ))
        // One short session first, so what lives as long as the process (the HTTP client's
        // connection machinery) exists before the baseline is taken.
        let warmUpClient = try await SoakClient.connect(port: server.port, token: server.secret, phase: 0)
        await warmUpClient.talk(until: .now + .seconds(3))
        _ = await ResourceProbe.eventually(within: 10) { warmUpClient.counts.completed >= 1 && warmUpClient.counts.responsesOpen == 0 }
        warmUpClient.close()
        #expect(await ResourceProbe.eventually(within: 10) { server.app.context.sessions.count == 0 })
        let descriptorsBefore = ResourceProbe.openFileDescriptors()

        var clients: [SoakClient] = []
        for index in 0..<settings.sessions {
            clients.append(try await SoakClient.connect(port: server.port, token: server.secret, phase: index))
        }
        #expect(await ResourceProbe.eventually(within: 10) { server.app.context.sessions.count == settings.sessions })
        let sessions = server.app.context.sessions.all.map { WeakSession($0.session) }

        let started = ContinuousClock.now
        let end = started + .seconds(settings.seconds)
        let warmUp = started + .seconds(Double(settings.seconds) / 3)
        let residentAtWarmUp = await withTaskGroup(of: Int?.self) { group in
            for client in clients { group.addTask { await client.talk(until: end); return nil } }
            group.addTask {
                try? await Task.sleep(until: warmUp, clock: .continuous)
                return ResourceProbe.residentKilobytes()
            }
            return await group.reduce(nil) { $0 ?? $1 } ?? 0
        }
        // Let the last turns finish before counting.
        _ = await ResourceProbe.eventually(within: 10) { clients.allSatisfy { $0.counts.responsesOpen == 0 } }
        let residentAtEnd = ResourceProbe.residentKilobytes()
        let descriptorsDuring = ResourceProbe.openFileDescriptors()
        let counts = clients.map(\.counts)
        let turns = counts.reduce(0) { $0 + $1.completed }
        let errors = counts.reduce(0) { $0 + $1.errors }
        let dropped = counts.filter(\.closed).count

        for client in clients { client.close() }
        clients.removeAll()
        #expect(await ResourceProbe.eventually(within: 10) { server.app.context.sessions.count == 0 }, "sessions outlived their sockets")
        #expect(await ResourceProbe.eventually(within: 10) { sessions.allSatisfy { $0.session == nil } }, "a VoiceSession was never freed")
        #expect(await ResourceProbe.eventually(within: 10) {
            upstreams.all.allSatisfy { $0.connections == 0 && ResourceProbe.sockets(port: $0.port, remoteOnly: true) == 0 }
                && ResourceProbe.sockets(port: server.port) == 1  // the listener alone
        }, "sockets left open")
        if settings.strict { _ = await ResourceProbe.eventually(within: 5) { ResourceProbe.openFileDescriptors() <= descriptorsBefore } }
        let descriptorsAfter = ResourceProbe.openFileDescriptors()
        await server.stop()
        let growth = residentAtWarmUp > 0 ? Double(residentAtEnd - residentAtWarmUp) / Double(residentAtWarmUp) * 100 : 0

        #expect(errors == 0, "\(errors) error events: \(counts.compactMap(\.firstError).prefix(3))")
        #expect(dropped == 0, "\(dropped) sessions were closed by the server")
        #expect(counts.allSatisfy { $0.completed >= 1 }, "a session never completed a turn: \(counts.map(\.completed))")
        if settings.strict {
            #expect(growth < 5, "RSS grew \(growth) % after warm-up")
            #expect(descriptorsAfter <= descriptorsBefore, "descriptors \(descriptorsBefore) before, \(descriptorsAfter) after")
        }
        print("soak\t\(settings.sessions) sessions\t\(settings.seconds) s\t\(turns) turns completed\t\(counts.reduce(0) { $0 + $1.cancelled }) interrupted\t\(errors) errors\t\(dropped) dropped"
            + "\tRSS \(residentAtWarmUp / 1024) MB at warm-up → \(residentAtEnd / 1024) MB at end (\(String(format: "%+.1f", growth)) %)"
            + "\tfds \(descriptorsBefore) before → \(descriptorsDuring) during → \(descriptorsAfter) after")
    }
}

/// A session that may be freed.
struct WeakSession: Sendable {
    weak let session: VoiceSession?
    init(_ session: VoiceSession) { self.session = session }
}

/// A lean realtime client for the soak: streams paced audio (speech bursts and pauses) and
/// counts events without keeping them, so its own memory stays flat.
///
/// `@unchecked Sendable`: `tally` is guarded by `lock`.
final class SoakClient: @unchecked Sendable {
    struct Counts: Sendable {
        var completed = 0
        var cancelled = 0
        var errors = 0
        var responsesOpen = 0
        var closed = false
        var firstError: String?
    }

    private let socket: WebSocketConnection
    private let lock = NSLock()
    private var tally = Counts()
    private var closedByUs = false
    /// Where in the speech/pause cycle this client starts, so sessions do not talk in lockstep.
    private let phase: Int

    /// 100 ms of audio per message.
    static let chunkMilliseconds = 100
    /// A cycle: 1.2 s of a voiced tone, then 1.6 s of faint noise.
    static let speech: [String] = chunks(of: (0..<28_800).map { Int16(6_000 * sin(Double($0) * 2 * .pi * 220 / 24_000)) })
    static let pause: [String] = {
        var generator = SystemRandomNumberGenerator()
        return chunks(of: (0..<38_400).map { _ in Int16.random(in: -40...40, using: &generator) })
    }()

    private static func chunks(of samples: [Int16]) -> [String] {
        let length = 24_000 * chunkMilliseconds / 1000
        return stride(from: 0, to: samples.count, by: length).map {
            let base64 = PCM16Buffer(format: .realtime, samples: Array(samples[$0..<min($0 + length, samples.count)])).base64EncodedString()
            return #"{"type":"input_audio_buffer.append","audio":"\#(base64)"}"#
        }
    }

    private init(socket: WebSocketConnection, phase: Int) {
        self.socket = socket
        self.phase = phase
        Task { [self] in
            for await message in socket.messages {
                guard case .text(let text) = message else { continue }
                count(text)
            }
            lock.withLock { if !closedByUs { tally.closed = true } }
        }
    }

    static func connect(port: Int, token: String, phase: Int) async throws -> SoakClient {
        let url = URL(string: "ws://127.0.0.1:\(port)/v1/realtime")!
        return SoakClient(socket: try await WebSocketClient.connect(to: url, headers: ["Authorization": "Bearer \(token)"]), phase: phase)
    }

    var counts: Counts { lock.withLock { tally } }

    /// Streams the speech/pause cycle in real time until `end`.
    func talk(until end: ContinuousClock.Instant) async {
        let cycle = Self.speech + Self.pause
        var index = phase * 7 % cycle.count
        var next = ContinuousClock.now
        while next < end {
            guard (try? socket.send(.text(cycle[index]))) != nil else { return }
            index = (index + 1) % cycle.count
            next += .milliseconds(Self.chunkMilliseconds)
            try? await Task.sleep(until: next, clock: .continuous)
        }
    }

    func close() {
        lock.withLock { closedByUs = true }
        socket.close(code: 1000, reason: "soak over")
    }

    private func count(_ text: String) {
        // Audio deltas are most of the traffic; their type is all that matters.
        if text.contains(#""type":"response.output_audio.delta""#) { return }
        guard let event = try? JSONValue(parsing: text), let type = event["type"]?.stringValue else { return }
        lock.withLock {
            switch type {
            case "response.created":
                tally.responsesOpen += 1
            case "response.done":
                tally.responsesOpen -= 1
                switch event["response"]?["status"]?.stringValue {
                case "completed": tally.completed += 1
                case "cancelled": tally.cancelled += 1
                default:
                    tally.errors += 1
                    if tally.firstError == nil { tally.firstError = text }
                }
            case "error":
                tally.errors += 1
                if tally.firstError == nil { tally.firstError = text }
            default:
                break
            }
        }
    }
}
