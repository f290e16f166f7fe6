import Foundation

/// How much a realtime client may send: events at a sustained rate with room for bursts, and
/// audio no faster than a little above real time once its first seconds are in.
///
/// A client that uploads a whole clip at once stays within the audio allowance (the first
/// `audioHeadStartSeconds`); one that streams at ten times real time, or floods events, runs
/// out and its session ends with `rate_limit_exceeded`, while every other session goes on.
struct ClientTrafficBudget: Sendable {
    /// Events allowed before the sustained rate counts.
    static let eventBurst = 2_000.0
    /// Events per second, sustained.
    static let eventsPerSecond = 400.0
    /// Seconds of audio allowed ahead of the session's age (a clip sent whole).
    static let audioHeadStartSeconds = 30.0
    /// Seconds of audio per second of session, sustained.
    static let audioRealTimeFactor = 2.0

    /// Why a client ran out.
    enum Violation: Equatable, Sendable {
        case eventFlood(events: Int, seconds: Double)
        case audioTooFast(audioSeconds: Double, seconds: Double)

        /// The sentence the client reads.
        var message: String {
            switch self {
            case .eventFlood(let events, let seconds):
                "Too many events: \(events) in \(String(format: "%.1f", seconds)) s (at most \(Int(ClientTrafficBudget.eventsPerSecond)) a second); the session is closed."
            case .audioTooFast(let audio, let seconds):
                "Audio arrives faster than real time: \(String(format: "%.1f", audio)) s of audio in \(String(format: "%.1f", seconds)) s; the session is closed."
            }
        }
    }

    private let started: ContinuousClock.Instant
    private var events = 0
    private var audioSeconds = 0.0

    /// A budget for a session that started at `started`.
    init(started: ContinuousClock.Instant) {
        self.started = started
    }

    /// Counts one event received at `now`.
    mutating func admitEvent(at now: ContinuousClock.Instant) -> Violation? {
        events += 1
        let age = (now - started).timeInterval
        guard Double(events) > Self.eventBurst + Self.eventsPerSecond * age else { return nil }
        return .eventFlood(events: events, seconds: age)
    }

    /// Counts `seconds` of input audio received at `now`.
    mutating func admitAudio(seconds: Double, at now: ContinuousClock.Instant) -> Violation? {
        audioSeconds += seconds
        let age = (now - started).timeInterval
        guard audioSeconds > Self.audioHeadStartSeconds + Self.audioRealTimeFactor * age else { return nil }
        return .audioTooFast(audioSeconds: audioSeconds, seconds: age)
    }
}
