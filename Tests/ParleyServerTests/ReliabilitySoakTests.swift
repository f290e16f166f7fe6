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
/// CI runs 20 sessions for 30 s in process. `scripts/reliability` runs the long soak through
/// the environment: `PARLEY_SOAK_SESSIONS`, `PARLEY_SOAK_SECONDS`, `PARLEY_SOAK_PROCESS=1`
/// (the server is a `parley serve` child, so its memory and descriptors are measured alone)
/// and `PARLEY_SOAK_STRICT=1` (the < 5 % memory growth after warm-up and the descriptor
/// baseline are enforced; in CI other suites share the process, so they are only reported).
/// `PARLEY_SOAK_SESSION_SECONDS` makes every client hang up and start a new session that
/// often, so session set-up and tear-down run all along and no conversation grows for the
/// whole run.
@Suite("Reliability: soak")
struct ReliabilitySoakTests {
    struct Settings {
        var sessions = 20
        var seconds = 30
        var strict = false
        var separateProcess = false
        /// How long each session lasts before its client starts a new one; `nil`: the whole run.
        var sessionSeconds: Int?

        static var current: Settings {
            let environment = ProcessInfo.processInfo.environment
            var settings = Settings()
            if let sessions = environment["PARLEY_SOAK_SESSIONS"].flatMap(Int.init) { settings.sessions = sessions }
            if let seconds = environment["PARLEY_SOAK_SECONDS"].flatMap(Int.init) { settings.seconds = seconds }
            settings.strict = environment["PARLEY_SOAK_STRICT"] == "1"
            settings.separateProcess = environment["PARLEY_SOAK_PROCESS"] == "1"
            settings.sessionSeconds = environment["PARLEY_SOAK_SESSION_SECONDS"].flatMap(Int.init)
            return settings
        }
    }

    @Test("sessions with paced audio run without error, drop or leak")
    func soak() async throws {
        let settings = Settings.current
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let server = try await SoakServer.start(separateProcess: settings.separateProcess, upstreams: upstreams)
        // One short session first, so what lives as long as the process (the HTTP client's
        // connection machinery) exists before the baseline is taken.
        let warmUpClient = try await SoakClient.connect(port: server.port, token: server.secret, phase: 0)
        await warmUpClient.talk(until: .now + .seconds(5))
        _ = await ResourceProbe.eventually(within: 10) { warmUpClient.counts.completed >= 1 && warmUpClient.counts.responsesOpen == 0 }
        warmUpClient.close()
        #expect(await ResourceProbe.eventually(within: 10) { await server.activeSessions() == 0 })
        let descriptorsBefore = ResourceProbe.openFileDescriptors(pid: server.pid)
        let targetsBefore = ResourceProbe.descriptorTargets(pid: server.pid)

        var clients: [SoakClient] = []
        for index in 0..<settings.sessions {
            clients.append(try await SoakClient.connect(port: server.port, token: server.secret, phase: index))
        }
        #expect(await ResourceProbe.eventually(within: 10) { await server.activeSessions() == settings.sessions })
        let sessions = server.liveSessions()

        let started = ContinuousClock.now
        let cpuAtStart = (server: ResourceProbe.cpuSeconds(pid: server.pid), tests: ResourceProbe.cpuSeconds())
        let end = started + .seconds(settings.seconds)
        // RSS every tenth of the run, the last a second before the clients stop (while every
        // session still talks); the sample at a third is the warm-up baseline.
        let (samples, replaced) = await withTaskGroup(of: (samples: [Int], clients: [SoakClient]).self) { group in
            for client in clients {
                group.addTask {
                    (samples: [], clients: await client.converse(until: end, sessionSeconds: settings.sessionSeconds, port: server.port, token: server.secret))
                }
            }
            group.addTask {
                var samples: [Int] = []
                for tenth in 1...10 {
                    let at = started + .seconds(Double(settings.seconds) * Double(tenth) / 10) - .seconds(tenth == 10 ? 1 : 0)
                    try? await Task.sleep(until: at, clock: .continuous)
                    samples.append(ResourceProbe.residentKilobytes(pid: server.pid))
                }
                return (samples: samples, clients: [])
            }
            return await group.reduce(into: (samples: [Int](), clients: [SoakClient]())) { $0.samples += $1.samples; $0.clients += $1.clients }
        }
        let everySession = clients + replaced
        // The sessions open now: each slot's latest client.
        clients = clients.map { first in replaced.last { $0.slot == first.slot } ?? first }
        let residentAtWarmUp = samples.count == 10 ? samples[2] : 0
        let residentAtEnd = samples.last ?? 0
        // Let the last turns finish before counting.
        _ = await ResourceProbe.eventually(within: 10) { clients.allSatisfy { $0.counts.responsesOpen == 0 } }
        let residentAfterClientsStopped = ResourceProbe.residentKilobytes(pid: server.pid)
        let elapsed = (ContinuousClock.now - started).elapsedSeconds
        let serverCores = (ResourceProbe.cpuSeconds(pid: server.pid) - cpuAtStart.server) / elapsed
        let testCores = (ResourceProbe.cpuSeconds() - cpuAtStart.tests) / elapsed
        let descriptorsDuring = ResourceProbe.openFileDescriptors(pid: server.pid)
        let counts = everySession.map(\.counts)
        let turns = counts.reduce(0) { $0 + $1.completed }
        let errors = counts.reduce(0) { $0 + $1.errors }
        let dropped = counts.filter(\.closed).count
        let unanswered = counts.reduce(0) { $0 + $1.unanswered }
        let answerTimes = counts.flatMap(\.answerMilliseconds).sorted()
        func percentile(_ fraction: Double) -> Int {
            answerTimes.isEmpty ? 0 : Int(answerTimes[min(answerTimes.count - 1, Int(Double(answerTimes.count) * fraction))])
        }

        for client in clients { client.close() }
        clients.removeAll()
        #expect(await ResourceProbe.eventually(within: 10) { await server.activeSessions() == 0 }, "sessions outlived their sockets")
        #expect(await ResourceProbe.eventually(within: 10) { sessions.allSatisfy { $0.session == nil } }, "a VoiceSession was never freed")
        #expect(await ResourceProbe.eventually(within: 10) {
            upstreams.all.allSatisfy { $0.connections == 0 && ResourceProbe.sockets(pid: server.pid, port: $0.port, remoteOnly: true) == 0 }
                && ResourceProbe.sockets(pid: server.pid, port: server.port) == 1  // the listener alone
        }, Comment(rawValue: "sockets left open: \(ResourceProbe.sockets(pid: server.pid, port: server.port)) on the server port (1 is the listener), "
            + "\(upstreams.all.map { ResourceProbe.sockets(pid: server.pid, port: $0.port, remoteOnly: true) }) to the upstreams, "
            + "\(upstreams.all.map(\.connections)) held by them"))
        var descriptorsAfter = ResourceProbe.openFileDescriptors(pid: server.pid)
        var newTargets: [String] = []
        if settings.strict {
            _ = await ResourceProbe.eventually(within: 10) {
                descriptorsAfter = ResourceProbe.openFileDescriptors(pid: server.pid)
                newTargets = Set(ResourceProbe.descriptorTargets(pid: server.pid)).subtracting(targetsBefore).map { ResourceProbe.describe($0, pid: server.pid) }
                return descriptorsAfter <= descriptorsBefore
            }
        }
        await server.stop()
        let growth = residentAtWarmUp > 0 ? Double(residentAtEnd - residentAtWarmUp) / Double(residentAtWarmUp) * 100 : 0

        #expect(errors == 0, "\(errors) error events: \(counts.compactMap(\.firstError).prefix(3))")
        #expect(dropped == 0, "\(dropped) sessions were closed by the server")
        #expect(counts.allSatisfy { $0.completed >= 1 }, "a session never completed a turn: \(counts.map(\.completed))")
        #expect(unanswered == 0, "\(unanswered) utterances got no answer within \(SoakClient.answerLimit)")
        if settings.strict {
            #expect(growth < 5, "RSS grew \(growth) % after warm-up")
            #expect(descriptorsAfter <= descriptorsBefore, "descriptors \(descriptorsBefore) before, \(descriptorsAfter) after; new: \(newTargets.sorted())")
        }
        print("soak\t\(settings.sessions) sessions\t\(settings.seconds) s\t\(settings.separateProcess ? "parley serve" : "in process")"
            + (settings.sessionSeconds.map { "\ta new session every \($0) s, \(counts.count) sessions in all" } ?? "")
            + "\tpause \(SoakClient.pauseChunks * SoakClient.chunkMilliseconds) ms\t\(turns) turns completed\t\(counts.reduce(0) { $0 + $1.cancelled }) interrupted\t\(unanswered) unanswered\t\(errors) errors\t\(dropped) dropped"
            + "\tend of speech → response.done p50 \(percentile(0.5)) ms, p99 \(percentile(0.99)) ms"
            + "\tCPU: server \(String(format: "%.2f", serverCores)) cores\(settings.separateProcess ? ", clients and upstream \(String(format: "%.2f", testCores)) cores" : "")"
            + "\tRSS \(residentAtWarmUp / 1024) MB at warm-up → \(residentAtEnd / 1024) MB at end (\(String(format: "%+.1f", growth)) %)"
            + ", \(residentAfterClientsStopped / 1024) MB once every client stopped at the same moment"
            + "\tfds \(descriptorsBefore) before → \(descriptorsDuring) during → \(descriptorsAfter) after"
            + "\tRSS by tenths (MB): \(samples.map { String($0 / 1024) }.joined(separator: " "))")
    }
}

/// The server under soak: a `ParleyApp` in this process, or `parley serve` as a child.
enum SoakServer: Sendable {
    case inProcess(TestServer)
    case child(ServerProcess)

    static func start(separateProcess: Bool, upstreams: FaultyUpstreams) async throws -> SoakServer {
        if separateProcess {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-soak-\(UUID().uuidString)")
            return .child(try await ServerProcess.start(dataDirectory: directory, upstreams: upstreams))
        }
        return .inProcess(try TestServer.start(providers: upstreams.providers(
            key: "sk-soak", timeouts: OpenAITimeouts(firstOutput: .seconds(10), idle: .seconds(10)), retry: .none
        )))
    }

    var port: Int {
        switch self {
        case .inProcess(let server): server.port
        case .child(let server): server.port
        }
    }

    var secret: String {
        switch self {
        case .inProcess(let server): server.secret
        case .child: ServerProcess.secret
        }
    }

    /// The process to measure, as `/proc` names it.
    var pid: String {
        switch self {
        case .inProcess: "self"
        case .child(let server): String(server.pid)
        }
    }

    /// Realtime sessions open now (`parley_active_sessions` for a child).
    func activeSessions() async -> Int {
        switch self {
        case .inProcess(let server):
            return server.app.context.sessions.count
        case .child(let server):
            // A connection of its own, closed after the answer: a pooled one would count as a leaked descriptor.
            guard let response = try? await HTTPRequestSender.send(port: server.port, "GET", "/metrics") else { return -1 }
            let line = response.text.split(separator: "\n").first { $0.hasPrefix("parley_active_sessions ") }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
        }
    }

    /// The sessions running now, to check they are freed (in process only).
    func liveSessions() -> [WeakSession] {
        guard case .inProcess(let server) = self else { return [] }
        return server.app.context.sessions.all.map { WeakSession($0.session) }
    }

    func stop() async {
        switch self {
        case .inProcess(let server):
            await server.stop()
        case .child(let server):
            _ = await server.terminate()
            try? FileManager.default.removeItem(at: server.dataDirectory)
        }
    }
}

/// A session that may be freed.
struct WeakSession: Sendable {
    weak let session: VoiceSession?
    init(_ session: VoiceSession) { self.session = session }
}

/// A lean realtime client for the soak: streams audio in real time without a break, like a
/// microphone — a 1.2 s utterance, then faint noise while it waits for the answer and for a
/// pause after it, then the next utterance — and counts events without keeping them, so its
/// own memory stays flat. Waiting for the answer makes it a polite talker: the turn rate
/// follows the server, as a person's does.
///
/// `@unchecked Sendable`: `tally` and `closedByUs` are guarded by `lock`.
final class SoakClient: @unchecked Sendable {
    struct Counts: Sendable {
        var completed = 0
        var cancelled = 0
        var errors = 0
        var responsesOpen = 0
        /// Utterances no response finished for within `answerLimit`.
        var unanswered = 0
        /// End of an utterance → its `response.done`, in milliseconds.
        var answerMilliseconds: [Double] = []
        var closed = false
        var firstError: String?

        var finished: Int { completed + cancelled + errors }
    }

    private let socket: WebSocketConnection
    private let lock = NSLock()
    private var tally = Counts()
    private var closedByUs = false
    /// Delays the first utterance by this many chunks, so sessions do not talk in lockstep.
    private let phase: Int
    /// The client slot this session fills: a slot's later sessions share it (and the phase).
    var slot: Int { phase }

    /// 100 ms of audio per message.
    static let chunkMilliseconds = 100
    /// The pause after an answer before the next utterance, in chunks: 6 s by default (a person
    /// listens to the reply and thinks), `PARLEY_SOAK_PAUSE_MS` to change it.
    static let pauseChunks = (ProcessInfo.processInfo.environment["PARLEY_SOAK_PAUSE_MS"].flatMap(Int.init) ?? 6_000) / chunkMilliseconds
    /// How long an utterance may wait for its answer.
    static let answerLimit: Duration = .seconds(20)
    /// 1.2 s of a voiced tone.
    static let speech: [String] = chunks(of: (0..<28_800).map { Int16(6_000 * sin(Double($0) * 2 * .pi * 220 / 24_000)) })
    /// 100 ms of faint noise.
    static let quiet: String = {
        var generator = SystemRandomNumberGenerator()
        return chunks(of: (0..<2_400).map { _ in Int16.random(in: -40...40, using: &generator) })[0]
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

    /// What the microphone does next.
    private enum Stage {
        case quietBeforeSpeaking(chunksLeft: Int)
        case speaking(chunk: Int)
        case awaitingAnswer(since: ContinuousClock.Instant, finishedBefore: Int)
    }

    /// Talks until `end`; with `sessionSeconds`, hangs up that often (once its answers are in)
    /// and talks on in a new session.
    /// - Returns: the sessions that followed this one, the last still open.
    func converse(until end: ContinuousClock.Instant, sessionSeconds: Int?, port: Int, token: String) async -> [SoakClient] {
        guard let sessionSeconds else {
            await talk(until: end)
            return []
        }
        var followers: [SoakClient] = []
        var current = self
        while true {
            await current.talk(until: min(end, .now + .seconds(sessionSeconds)))
            guard ContinuousClock.now < end else { return followers }
            _ = await ResourceProbe.eventually(within: 20) { current.counts.responsesOpen == 0 }
            current.close()
            guard let next = try? await SoakClient.connect(port: port, token: token, phase: phase) else {
                current.lock.withLock { current.tally.closed = true }  // counted as dropped
                return followers
            }
            followers.append(next)
            current = next
        }
    }

    /// Streams audio in real time until `end`.
    func talk(until end: ContinuousClock.Instant) async {
        var stage = Stage.quietBeforeSpeaking(chunksLeft: phase * 7 % 28)
        var next = ContinuousClock.now
        while next < end {
            let message: String
            switch stage {
            case .quietBeforeSpeaking(let left):
                message = Self.quiet
                stage = left <= 1 ? .speaking(chunk: 0) : .quietBeforeSpeaking(chunksLeft: left - 1)
            case .speaking(let chunk):
                message = Self.speech[chunk]
                stage = chunk + 1 < Self.speech.count
                    ? .speaking(chunk: chunk + 1)
                    : .awaitingAnswer(since: next + .milliseconds(Self.chunkMilliseconds), finishedBefore: counts.finished)
            case .awaitingAnswer(let since, let finishedBefore):
                message = Self.quiet
                if counts.finished > finishedBefore {
                    let milliseconds = Double((ContinuousClock.now - since).components.attoseconds) / 1e15
                        + Double((ContinuousClock.now - since).components.seconds) * 1000
                    lock.withLock { tally.answerMilliseconds.append(milliseconds) }
                    stage = .quietBeforeSpeaking(chunksLeft: Self.pauseChunks)
                } else if ContinuousClock.now - since > Self.answerLimit {
                    lock.withLock { tally.unanswered += 1 }
                    stage = .quietBeforeSpeaking(chunksLeft: Self.pauseChunks)
                }
            }
            guard (try? socket.send(.text(message))) != nil else { return }
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
        if text.hasPrefix(#"{"type":"response.output_audio.delta""#) { return }
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
