import Foundation
import ParleyServer

/// The engines of the defaults a user gets, for the capacity benchmarks that serve them in this
/// process (the phone doors, WebRTC): the upstream of the server's defaults profile
/// (`RealisticUpstream.hostedGPT41Mini`) as a `FakeUpstream` child process, and the providers
/// at it with a Silero VAD per session. The rest of the defaults (server_vad with its 300 ms
/// silence window, preemption on) are `ServerSettings`' own.
struct DefaultsUpstream: Sendable {
    /// How figure names say the defaults, the question included (`DefaultsQuestion`).
    static let label = "defaults (Silero VAD, 300 ms silence, preemption on, \(RealisticUpstream.hostedGPT41Mini.name), a spoken question)"

    private let upstream: ChildProcess
    /// Recognition, language model and synthesis at the upstream; Silero VAD.
    let providers: ProviderSet

    /// Starts the upstream, its standard error in a log named for `benchmark`, and loads Silero.
    /// - Throws: when the upstream does not start or the Silero model does not load.
    init(benchmark: String) async throws {
        let upstream = try await ChildProcess(
            executable: ChildProcess.sibling("FakeUpstream"),
            arguments: RealisticUpstream.hostedGPT41Mini.arguments,
            logPath: FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-\(benchmark)-upstream.log").path
        )
        do {
            guard let url = URL(string: upstream.address) else { throw EmbeddedBenchmarkFailure("bad upstream address \(upstream.address)") }
            providers = BenchmarkServer.providers(upstream: url, makeVoiceActivityDetector: try BenchmarkServer.sileroDetectors())
        } catch {
            upstream.stop()
            throw error
        }
        self.upstream = upstream
    }

    /// Stops the upstream process.
    func stop() {
        upstream.stop()
    }
}
