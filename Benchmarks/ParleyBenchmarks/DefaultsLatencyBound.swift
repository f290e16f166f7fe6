/// The p99 a capacity search with the defaults holds to: the upstream's own path to first audio
/// (`RealisticUpstream.pathToFirstAudioMs`), plus server_vad's 300 ms silence window, plus
/// 500 ms for the server.
///
/// A fixed bound stops meaning "the server kept up" once the upstream is as slow as a real one:
/// at one session the latency is already most of a second. This one is what the caller would
/// hear from an idle server that added nothing (the window, then the upstream's path; preemption
/// can only make it shorter), and 500 ms more, a wait a caller notices but that still sounds like
/// an answer, not a dropped line. Every term is a published figure or a setting, so a reader
/// can check it by hand.
struct DefaultsLatencyBound: Sendable {
    /// server_vad's default silence window.
    static let silenceWindowMs = 300
    /// What the server may add at the p99 before the count no longer holds.
    static let serverAllowanceMs = 500

    /// The upstream's own path to first audio.
    var upstreamPathMs: Int

    /// The bound for the defaults' upstream.
    static let defaults = DefaultsLatencyBound(upstreamPathMs: RealisticUpstream.hostedGPT41Mini.pathToFirstAudioMs)

    var milliseconds: Int { upstreamPathMs + Self.silenceWindowMs + Self.serverAllowanceMs }

    /// The bound for figure names, with its terms.
    var text: String {
        "p99 ≤ \(milliseconds) ms (the upstream's own path to first audio \(upstreamPathMs) ms + the \(Self.silenceWindowMs) ms silence window + \(Self.serverAllowanceMs) ms)"
    }
}
