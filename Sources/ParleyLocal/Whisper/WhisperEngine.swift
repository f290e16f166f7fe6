import CWhisper
import Foundation
import ParleyCore

/// A loaded whisper.cpp model and the dedicated threads that run decodes on it.
///
/// The model weights (`whisper_context`) are loaded once and shared read-only. A decode needs
/// a `whisper_state`, which is not reentrant, so each worker thread owns one state and runs
/// one decode at a time: at most `workerCount` decodes run at once and further requests wait
/// in a FIFO queue. Blocking work never runs on Swift's cooperative thread pool.
final class WhisperEngine: Sendable {
    private let context: WhisperContextHandle
    private let jobs: WhisperJobQueue
    /// Whether the model hears many languages (English-only models such as tiny.en do not).
    let isMultilingual: Bool

    /// Loads the model at `modelPath` and starts `workerCount` worker threads.
    /// - Throws: `LocalModelError.unloadable` when whisper.cpp rejects the file.
    init(modelPath: String, workerCount: Int) throws {
        _ = WhisperLibrary.quietLogging
        var parameters = whisper_context_default_params()
        parameters.use_gpu = false
        guard let pointer = whisper_init_from_file_with_params_no_state(modelPath, parameters) else {
            throw LocalModelError.unloadable(kind: "Whisper model", path: modelPath)
        }
        context = WhisperContextHandle(pointer)
        isMultilingual = whisper_is_multilingual(pointer) != 0
        jobs = WhisperJobQueue()
        for index in 0..<max(1, workerCount) {
            let thread = Thread { [context, jobs] in
                Thread.current.name = "parley-whisper\(index)"  // From inside: see ServiceLoop.start.
                WhisperWorker(context: context, jobs: jobs).run()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    deinit {
        jobs.shutDown()
    }

    /// Runs `work` on a worker thread with the shared context and that worker's state; `alone`
    /// tells `work` whether no other decode was running or waiting when it started (it may
    /// then use more threads).
    ///
    /// Cancelling the calling task sets the `AbortFlag` passed to `work` (wire it to
    /// whisper.cpp's abort callback) or, when the job has not started yet, skips it.
    /// - Throws: what `work` throws, `CancellationError` when cancelled before it started,
    ///   `ProviderError` when no state could be allocated.
    func perform<Output: Sendable>(
        _ work: @escaping @Sendable (_ context: OpaquePointer, _ state: OpaquePointer, _ abort: AbortFlag, _ alone: Bool) throws -> Output
    ) async throws -> Output {
        let abort = AbortFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let job = WhisperJob(abort: abort) { slot in
                    guard !abort.isAborted else { return continuation.resume(throwing: CancellationError()) }
                    switch slot {
                    case let .failure(error):
                        continuation.resume(throwing: error)
                    case let .success(pointers):
                        continuation.resume(with: Result { try work(pointers.context, pointers.state, abort, pointers.alone) })
                    }
                }
                jobs.enqueue(job)
            }
        } onCancel: {
            abort.abort()
        }
    }
}

/// Owns a `whisper_context`. The context is immutable after loading and whisper.cpp reads it
/// concurrently from several states by design, so sharing the pointer across threads is safe.
final class WhisperContextHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { whisper_free(pointer) }
}

/// The context and a worker's state, handed to a job.
struct WhisperSlot {
    var context: OpaquePointer
    var state: OpaquePointer
    /// Whether no other decode was running or waiting when this one started.
    var alone: Bool
}

/// One decode waiting for a worker.
struct WhisperJob: Sendable {
    /// Set when the decode's caller is cancelled.
    var abort = AbortFlag()
    let run: @Sendable (Result<WhisperSlot, ProviderError>) -> Void
}

/// The FIFO of jobs shared by the worker threads.
///
/// A cancelled decode still running (whisper.cpp stops at its next abort check, within
/// milliseconds) holds back the next job until it stops, for at most `cancelledDecodeGrace`:
/// a turn's final transcription usually starts just as the user's silence cancels a partial
/// pass, and started beside it, it would take one thread where it could have had every core.
final class WhisperJobQueue: @unchecked Sendable {  // `condition` guards `pending`, `running` and `isShutDown`.
    /// The longest a job waits for a cancelled decode to stop before it starts anyway.
    static let cancelledDecodeGrace: TimeInterval = 0.1

    private let condition = NSCondition()
    private var pending: [WhisperJob] = []
    private var running: [WhisperJob] = []
    private var isShutDown = false

    func enqueue(_ job: WhisperJob) {
        condition.lock()
        if isShutDown {
            condition.unlock()
            job.run(.failure(ProviderError(.cancelled, provider: "whisper", message: "the recognizer was shut down")))
            return
        }
        pending.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Blocks until a job is available; `nil` once the queue is shut down and drained. The
    /// caller reports the job's end with `finished(_:)`. `alone`: no other job runs, except
    /// cancelled ones winding down, or waits.
    func next() -> (job: WhisperJob, alone: Bool)? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            while pending.isEmpty && !isShutDown { condition.wait() }
            guard !pending.isEmpty else { return nil }
            let graceEnds = Date(timeIntervalSinceNow: Self.cancelledDecodeGrace)
            while !isShutDown, running.contains(where: \.abort.isAborted), condition.wait(until: graceEnds) {}
            // Another worker may have taken the job meanwhile.
            guard !pending.isEmpty else { continue }
            let job = pending.removeFirst()
            running.append(job)
            let othersWorking = running.contains { $0.abort !== job.abort && !$0.abort.isAborted }
            return (job, !othersWorking && pending.isEmpty)
        }
    }

    /// Reports that `job`, taken with `next()`, has ended.
    func finished(_ job: WhisperJob) {
        condition.lock()
        if let index = running.firstIndex(where: { $0.abort === job.abort }) { running.remove(at: index) }
        condition.broadcast()
        condition.unlock()
    }

    func shutDown() {
        condition.lock()
        isShutDown = true
        condition.broadcast()
        condition.unlock()
    }
}

/// The loop of one worker thread: owns one `whisper_state`, created on first use.
private struct WhisperWorker {
    let context: WhisperContextHandle
    let jobs: WhisperJobQueue

    func run() {
        var state: OpaquePointer?
        while let (job, alone) = jobs.next() {
            defer { jobs.finished(job) }
            if state == nil { state = whisper_init_state(context.pointer) }
            if let state {
                job.run(.success(WhisperSlot(context: context.pointer, state: state, alone: alone)))
            } else {
                job.run(.failure(ProviderError(.server, provider: "whisper", message: "could not allocate a whisper.cpp decoding state (out of memory?)")))
            }
        }
        if let state { whisper_free_state(state) }
    }
}
