import Foundation

/// Records one conversation's audio as it happens: a 16-bit stereo WAV at 24 kHz with the
/// user on the left channel and the agent on the right, on the clock `StereoTimeline`
/// describes, the agent's audio cut where the listener stopped hearing it.
///
/// The session calls it on its own executor; each call only queues the audio. Resampling,
/// mixing and file writes run on one serial queue shared by every recording, never on a
/// session's executor, the Swift concurrency pool or the network thread; each recording is
/// written at most `writeInterval` after its audio arrived. A write error stops
/// the recording (see `failure`), never the call.
///
/// ```swift
/// let recorder = try CallRecorder(url: directory.appendingPathComponent("conv_1.wav"), makeResampler: makeResampler)
/// recorder.recordUser(samples, sampleRate: 24_000)
/// recorder.recordAgent(reply, sampleRate: 24_000, itemID: "item_2")
/// recorder.finish()
/// ```
public final class CallRecorder: @unchecked Sendable {
    // @unchecked Sendable: `queued`, `drainScheduled`, `isFinishing`, `finishWaiters`, `isDone`
    // and `storedFailure` are guarded by `lock`; `timeline`, `writer` and `resamplers` are
    // touched only on `Self.queue`.

    /// The rate of every recording.
    public static let sampleRate = 24_000
    /// Where every recording's work runs, one item at a time.
    private static let queue = DispatchQueue(label: "parley.recordings", qos: .utility)

    /// The file being written.
    public let url: URL

    private enum Command {
        case user([Int16], sampleRate: Int, afterAgent: Bool)
        case agent([Int16], sampleRate: Int, itemID: String)
        case cut(itemID: String, milliseconds: Int)
        case finish
        /// Resumes its waiter once everything before it is written.
        case written(CheckedContinuation<Void, Never>)
    }

    private let lock = NSLock()
    private var queued: [Command] = []
    private var drainScheduled = false
    private var isFinishing = false
    private var isDone = false
    private var finishWaiters: [CheckedContinuation<Void, Never>] = []
    private var storedFailure: RecordingError?

    private var timeline = StereoTimeline(sampleRate: CallRecorder.sampleRate)
    private var writer: WAVStreamWriter?
    private var resamplers: [String: any Resampler] = [:]
    private let makeResampler: @Sendable (Int, Int) -> any Resampler

    /// Opens (or continues) the recording at `url`.
    /// - Parameter makeResampler: converts audio at other rates to 24 kHz.
    /// - Throws: `RecordingError` when the file cannot be opened or is not a recording of this format.
    public init(url: URL, makeResampler: @escaping @Sendable (Int, Int) -> any Resampler) throws(RecordingError) {
        self.url = url
        self.makeResampler = makeResampler
        writer = try WAVStreamWriter(url: url, format: AudioFormat(sampleRate: Self.sampleRate, channelCount: 2))
    }

    /// Why the recording stopped early, if it did.
    public var failure: RecordingError? { lock.withLock { storedFailure } }

    /// The user's audio as it arrives: mono PCM16 at `sampleRate`. It moves the clock.
    /// - Parameter sentOnlyWhileTalking: the client sends audio only while the user talks
    ///   (push-to-talk), so agent audio still waiting was heard before this audio.
    public func recordUser(_ samples: [Int16], sampleRate: Int, sentOnlyWhileTalking: Bool = false) {
        enqueue(.user(samples, sampleRate: sampleRate, afterAgent: sentOnlyWhileTalking))
    }

    /// The agent's audio of `itemID` as it is sent to the listener: mono PCM16 at `sampleRate`.
    public func recordAgent(_ samples: [Int16], sampleRate: Int, itemID: String) {
        enqueue(.agent(samples, sampleRate: sampleRate, itemID: itemID))
    }

    /// The listener heard only the first `milliseconds` of `itemID`'s audio: the rest is not recorded.
    public func cutAgent(itemID: String, afterMilliseconds milliseconds: Int) {
        enqueue(.cut(itemID: itemID, milliseconds: milliseconds))
    }

    /// Writes the agent audio still to be played and closes the file; later calls do nothing.
    public func finish() { enqueue(.finish) }

    /// Waits until the file is complete and closed (after `finish()`).
    public func finished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = lock.withLock {
                if !isDone { finishWaiters.append(continuation) }
                return isDone
            }
            if done { continuation.resume() }
        }
    }

    /// How long queued audio may wait to be written: one write per recording per interval
    /// instead of one per 20 ms chunk (half the CPU of the recordings bench area); a crash
    /// loses at most this.
    static let writeInterval = DispatchTimeInterval.milliseconds(100)

    /// Waits until the audio recorded so far is in the file (without finishing it).
    func written() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !enqueue(.written(continuation)) { continuation.resume() }
        }
    }

    /// Queues `command`; `false` when the recording is finishing and takes no more.
    @discardableResult
    private func enqueue(_ command: Command) -> Bool {
        let (accepted, schedules, now): (Bool, Bool, Bool) = lock.withLock {
            guard !isFinishing else { return (false, false, false) }
            var now = false
            switch command {
            case .finish: isFinishing = true; now = true
            case .written: now = true
            default: break
            }
            queued.append(command)
            defer { drainScheduled = true }
            return (true, !drainScheduled, now)
        }
        guard accepted else { return false }
        if now {
            Self.queue.async { self.drain() }
        } else if schedules {
            Self.queue.asyncAfter(deadline: .now() + Self.writeInterval) { self.drain() }
        }
        return true
    }

    /// Carries out everything queued (on `Self.queue`), batching the file writes.
    private func drain() {
        let commands: [Command] = lock.withLock {
            defer { queued.removeAll(keepingCapacity: true); drainScheduled = false }
            return queued
        }
        var frames: [Int16] = []
        var finishes = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        for command in commands {
            switch command {
            case .user(let samples, let rate, let afterAgent):
                frames += timeline.appendUser(convert(samples, from: rate, stream: "user"), afterAgent: afterAgent)
            case .agent(let samples, let rate, let itemID):
                timeline.appendAgent(convert(samples, from: rate, stream: "agent"), itemID: itemID)
            case .cut(let itemID, let milliseconds):
                timeline.cutAgent(itemID: itemID, afterMilliseconds: milliseconds)
            case .finish:
                frames += timeline.drainAgent()
                finishes = true
            case .written(let waiter):
                waiters.append(waiter)
            }
        }
        do {
            try writer?.append(frames)
        } catch {
            writer = nil
            lock.withLock { storedFailure = storedFailure ?? error }
        }
        waiters.forEach { $0.resume() }
        guard finishes else { return }
        writer = nil
        let finished: [CheckedContinuation<Void, Never>] = lock.withLock {
            isDone = true
            defer { finishWaiters.removeAll() }
            return finishWaiters
        }
        finished.forEach { $0.resume() }
    }

    /// `samples` at the recording's rate; each stream keeps its own resampler state.
    private func convert(_ samples: [Int16], from rate: Int, stream: String) -> [Int16] {
        guard rate != Self.sampleRate else { return samples }
        let key = "\(stream)@\(rate)"
        var resampler = resamplers[key] ?? makeResampler(rate, Self.sampleRate)
        let converted = resampler.process(samples)
        resamplers[key] = resampler
        return converted
    }
}
