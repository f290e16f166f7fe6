import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing

/// A thousand sessions opened and dropped mid-turn on every door (the realtime WebSocket, the
/// phone, WebRTC) leave nothing behind: every `VoiceSession` is freed (no task still holds
/// one), no session is counted, no call is kept, and the process has the threads, descriptors
/// and memory it had after the first hundred.
@Suite("Session churn on every door")
struct SessionChurnTests {
    static let sessions = 1_000
    static let warmUp = 100
    static let concurrent = 10

    @Test("a thousand sessions dropped mid-turn on every door leave no session, task, call, thread or memory behind")
    func churnLeavesNothingBehind() async throws {
        let server = try TestServer.start(providers: TwilioCallTests.providers()) { settings in
            settings.webRTCSetupTimeout = .seconds(1)
            settings.maximumSessionsPerUser = 1_000
            settings.maximumSessionsPerToken = 1_000
        }
        let collector = SessionCollector()
        var baseline: (threads: Int, descriptors: Int, residentKilobytes: Int)?
        var opened = 0
        while opened < Self.sessions {
            await withTaskGroup(of: Void.self) { group in
                for index in opened..<min(opened + Self.concurrent, Self.sessions) {
                    group.addTask { await Self.dropMidTurn(door: index % 3, server: server, collector: collector) }
                }
            }
            opened += Self.concurrent
            if opened == Self.warmUp {
                #expect(await Self.settled(server, collector))
                baseline = (Self.threads(), ResourceProbe.openFileDescriptors(), ResourceProbe.residentKilobytes())
            }
        }
        #expect(await Self.settled(server, collector), "sessions outlived their clients: \(server.app.context.sessions.count) live, \(collector.unfreed) not freed")
        #expect(collector.seen >= Self.sessions * 2 / 3, "only \(collector.seen) sessions were seen running")
        let before = try #require(baseline)
        let threads = Self.threads()
        #expect(threads <= before.threads + 2, "threads: \(before.threads) after the warm-up, \(threads) at the end")
        var descriptors = ResourceProbe.openFileDescriptors()
        _ = await ResourceProbe.eventually(within: 10) {
            descriptors = ResourceProbe.openFileDescriptors()
            return descriptors <= before.descriptors + 4
        }
        #expect(descriptors <= before.descriptors + 4, "descriptors: \(before.descriptors) after the warm-up, \(descriptors) at the end")
        let grownKilobytes = ResourceProbe.residentKilobytes() - before.residentKilobytes
        #expect(grownKilobytes < 64 * 1024, "memory grew by \(grownKilobytes / 1024) MiB over \(Self.sessions - Self.warmUp) sessions")
        await server.stop()
    }

    /// Opens a session through `door` (0 the WebSocket, 1 the phone, 2 WebRTC), lets its turn
    /// start, and drops it.
    static func dropMidTurn(door: Int, server: TestServer, collector: SessionCollector) async {
        switch door {
        case 0:
            guard let client = try? await RealtimeTestClient.connect(server, token: server.clientToken()) else { return }
            try? client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"tell me a story"}]}}"#)
            try? client.send(#"{"type":"response.create"}"#)
            _ = await client.next("response.output_audio.delta", seconds: 20)
            collector.collect(server)
            client.socket.close(code: 1000, reason: "gone")
        case 1:
            guard let call = try? await TwilioCallTests.placeCall(server, playedMarks: 0) else { return }
            try? call.sendAudio(TelephoneAudio.question())
            _ = await call.next("media", seconds: 20)
            collector.collect(server)
            call.socket.close(code: 1000, reason: "hung up")
        default:
            let reply = try? await WebRTCCallTests.post(server, body: WebRTCCallTests.offer, contentType: "application/sdp", token: server.clientToken())
            if reply?.status == 201 { collector.collect(server) }
            // The peer never connects: the call ends when its setup time runs out.
        }
    }

    /// Whether every session ended, was freed and left no call, within the deadline.
    static func settled(_ server: TestServer, _ collector: SessionCollector) async -> Bool {
        await ResourceProbe.eventually(within: 30) {
            server.app.context.sessions.count == 0 && server.app.context.calls.count == 0
                && server.app.context.metrics.activeSessionCount == 0 && collector.unfreed == 0
        }
    }

    /// The process's threads, from /proc/self/status.
    static func threads() -> Int {
        let line = ResourceProbe.procText("/proc/self/status")?.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return line.flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
    }
}

/// The sessions seen running, held weakly, to check each is freed once it ends.
///
/// `@unchecked Sendable`: `sessions` is guarded by `lock`.
final class SessionCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var sessions: [WeakSession] = []

    /// Notes every session running on `server` now.
    func collect(_ server: TestServer) {
        let running = server.app.context.sessions.all.map { WeakSession($0.session) }
        lock.withLock { sessions += running }
    }

    /// How many sessions were seen running (one running while several were collected counts each time).
    var seen: Int { lock.withLock { sessions.count } }

    /// How many of them are still in memory.
    var unfreed: Int { lock.withLock { sessions.filter { $0.session != nil }.count } }
}
