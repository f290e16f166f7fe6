import Foundation
import ParleyCore

/// A microphone and speaker without hardware, for tests and SwiftUI previews: the caller feeds
/// captured frames, holds capture start behind a gate, refuses permission, breaks the capture,
/// and moves the playback position by hand.
///
/// ```swift
/// let audio = FakeConversationAudio()
/// model.beginHold()
/// await audio.waitUntilCapturing()
/// audio.capture(FakeConversationAudio.tone(milliseconds: 600))
/// model.endHold()
/// ```
public final class FakeConversationAudio: ConversationAudio, @unchecked Sendable {
    // @unchecked Sendable: `state` is guarded by `lock`; the rest is immutable.

    /// What the fake has been asked to do so far.
    public struct Record: Sendable, Hashable {
        /// `startCapture()` calls, including ones still held at the gate.
        public var captureStartRequests = 0
        /// `startCapture()` calls that started the microphone.
        public var captureStarts = 0
        /// `stopCapture()` calls.
        public var captureStops = 0
        /// `stopPlayback()` calls.
        public var playbackStops = 0
        /// Samples queued for playback, per item.
        public var queuedSamples: [String: Int] = [:]
        /// Whether the microphone is on.
        public var isCapturing = false
    }

    /// A task waiting for the record to satisfy a condition.
    private struct RecordWaiter {
        var id: Int
        var condition: @Sendable (Record) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var access: MicrophoneAccess
        var startFailure: String?
        var startGate: (isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])
        var capture: AsyncThrowingStream<CapturedAudio, any Error>.Continuation?
        var recordWaiters: [RecordWaiter] = []
        var nextWaiterID = 0
        var playing: (itemID: String, playedSamples: Int, queuedSamples: Int)?
        var record = Record()
    }

    private let lock = NSLock()
    private var state: State
    private let playbackContinuation: AsyncStream<PlaybackEvent>.Continuation

    public let playbackEvents: AsyncStream<PlaybackEvent>

    /// Creates a fake.
    /// - Parameters:
    ///   - access: what `requestMicrophoneAccess()` answers.
    ///   - holdsCaptureStart: when true, `startCapture()` waits until `releaseCaptureStart()`
    ///     (to play a release that arrives while the microphone is still starting).
    public init(access: MicrophoneAccess = .granted, holdsCaptureStart: Bool = false) {
        state = State(access: access, startGate: (!holdsCaptureStart, []))
        // Unbounded: a test produces a handful of playback events.
        (playbackEvents, playbackContinuation) = AsyncStream.makeStream(of: PlaybackEvent.self, bufferingPolicy: .unbounded)
    }

    // MARK: Controls

    /// What the fake has been asked to do so far.
    public var record: Record { lock.withLock { state.record } }

    /// Whether the microphone is on.
    public var isCapturing: Bool { lock.withLock { state.capture != nil } }

    /// Sets what `requestMicrophoneAccess()` answers from now on.
    public func setAccess(_ access: MicrophoneAccess) { lock.withLock { state.access = access } }

    /// Makes the next `startCapture()` calls throw with `message`.
    public func failCaptureStart(_ message: String?) { lock.withLock { state.startFailure = message } }

    /// Lets held `startCapture()` calls (and all later ones) go ahead.
    public func releaseCaptureStart() {
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            state.startGate.isOpen = true
            defer { state.startGate.waiters = [] }
            return state.startGate.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Returns once the microphone is on.
    public func waitUntilCapturing() async {
        await waitUntil { $0.isCapturing }
    }

    /// Returns once `condition` holds for the record (at once if it already does), or when
    /// the task is cancelled.
    public func waitUntil(_ condition: @escaping @Sendable (Record) -> Bool) async {
        let id = lock.withLock { () -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = lock.withLock { () -> Bool in
                    if condition(state.record) || Task.isCancelled { return true }
                    state.recordWaiters.append(RecordWaiter(id: id, condition: condition, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { () -> RecordWaiter? in
                guard let index = state.recordWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.recordWaiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }

    /// Changes the record and wakes the waiters whose condition now holds.
    private func updateRecord(_ change: (inout State) -> Void) {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            change(&state)
            state.record.isCapturing = state.capture != nil
            let record = state.record
            let ready = state.recordWaiters.filter { $0.condition(record) }
            state.recordWaiters.removeAll { $0.condition(record) }
            return ready.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    /// Delivers captured samples (24 kHz mono) as one frame; dropped when not capturing.
    /// - Returns: whether the microphone was on.
    @discardableResult
    public func capture(_ samples: [Int16]) -> Bool {
        var meter = LevelMeter(sampleRate: 24_000)
        let level = meter.process(samples.map { Float($0) / 32768 }).level
        guard let capture = lock.withLock({ state.capture }) else { return false }
        capture.yield(CapturedAudio(samples: samples, level: level))
        return true
    }

    /// Breaks the running capture, as a device that went away would.
    public func breakCapture(_ message: String) {
        var capture: AsyncThrowingStream<CapturedAudio, any Error>.Continuation?
        updateRecord { state in
            capture = state.capture
            state.capture = nil
        }
        capture?.finish(throwing: FakeAudioError(message: message))
    }

    /// Moves playback of the current item to `milliseconds` heard.
    public func setPlayed(milliseconds: Int) {
        lock.withLock {
            guard var playing = state.playing else { return }
            playing.playedSamples = min(milliseconds * 24, playing.queuedSamples)
            state.playing = playing
        }
    }

    /// Plays everything queued to the end: the speaker goes quiet.
    public func finishPlayback() {
        let wasPlaying = lock.withLock { () -> Bool in
            defer { state.playing = nil }
            return state.playing != nil
        }
        if wasPlaying { playbackContinuation.yield(.drained) }
    }

    /// A 440 Hz tone at a speaking level, `milliseconds` long at 24 kHz.
    public static func tone(milliseconds: Int) -> [Int16] {
        (0..<(milliseconds * 24)).map { Int16(6000 * sin(2 * Double.pi * 440 * Double($0) / 24_000)) }
    }

    // MARK: ConversationAudio

    public func requestMicrophoneAccess() async -> MicrophoneAccess {
        lock.withLock { state.access }
    }

    public func startCapture() async throws -> AsyncThrowingStream<CapturedAudio, any Error> {
        updateRecord { $0.record.captureStartRequests += 1 }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = lock.withLock { () -> Bool in
                if state.startGate.isOpen { return true }
                state.startGate.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
        if let failure = lock.withLock({ state.startFailure }) { throw FakeAudioError(message: failure) }
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: CapturedAudio.self, throwing: (any Error).self, bufferingPolicy: .unbounded
        )
        var previous: AsyncThrowingStream<CapturedAudio, any Error>.Continuation?
        updateRecord { state in
            previous = state.capture
            state.capture = continuation
            state.record.captureStarts += 1
        }
        previous?.finish()
        return stream
    }

    public func stopCapture() async {
        var capture: AsyncThrowingStream<CapturedAudio, any Error>.Continuation?
        updateRecord { state in
            state.record.captureStops += 1
            capture = state.capture
            state.capture = nil
        }
        capture?.finish()
    }

    public func play(_ samples: [Int16], itemID: String) {
        var started = false
        updateRecord { state in
            state.record.queuedSamples[itemID, default: 0] += samples.count
            if var playing = state.playing, playing.itemID == itemID {
                playing.queuedSamples += samples.count
                state.playing = playing
            } else {
                state.playing = (itemID, 0, samples.count)
                started = true
            }
        }
        if started { playbackContinuation.yield(.started(itemID: itemID)) }
    }

    public func stopPlayback() -> PlaybackPosition? {
        var position: PlaybackPosition?
        updateRecord { state in
            state.record.playbackStops += 1
            position = state.playing.map { PlaybackPosition(itemID: $0.itemID, playedMilliseconds: $0.playedSamples / 24) }
            state.playing = nil
        }
        return position
    }

    public var playbackPosition: PlaybackPosition? {
        lock.withLock { state.playing.map { PlaybackPosition(itemID: $0.itemID, playedMilliseconds: $0.playedSamples / 24) } }
    }
}

/// A failure the fake audio was told to have.
public struct FakeAudioError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    public var description: String { message }
}
