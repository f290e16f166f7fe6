import Foundation
import ParleyCore
import ParleySync

/// A loaded Piper voice — its network, config and phonemizer — and the dedicated threads that
/// run its syntheses, shared by every session of the process.
///
/// Each synthesis (phonemes, then the network with one onnxruntime thread) runs on one of
/// `workerCount` worker threads, never on Swift's cooperative pool, the network thread or a
/// session's executor; further requests wait in a FIFO queue.
final class PiperEngine: Sendable {
    let config: PiperVoiceConfig
    private let network: PiperNetwork
    private let phonemizer: EspeakPhonemizer
    private let jobs = PiperJobQueue()

    private static let loaded = Locked<[String: PiperEngine]>([:])

    /// The engine of the voice at `modelPath`, loaded once per process.
    /// - Throws: `LocalModelError` when a file is missing or unloadable, `ProviderError` when
    ///   espeak-ng or onnxruntime fails.
    static func load(modelPath: String, configPath: String, onnxRuntimePath: String, espeak: String, workerCount: Int) throws -> PiperEngine {
        let key = [modelPath, configPath, onnxRuntimePath, espeak].joined(separator: "\u{0}")
        if let engine = loaded.withLock({ $0[key] }) { return engine }
        let engine = try PiperEngine(modelPath: modelPath, configPath: configPath, onnxRuntimePath: onnxRuntimePath, espeak: espeak, workerCount: workerCount)
        return loaded.withLock { cache in
            if let existing = cache[key] { return existing }
            cache[key] = engine
            return engine
        }
    }

    private init(modelPath: String, configPath: String, onnxRuntimePath: String, espeak: String, workerCount: Int) throws {
        guard FileManager.default.isReadableFile(atPath: modelPath) else {
            throw LocalModelError.missingFile(kind: "Piper voice", path: modelPath)
        }
        config = try PiperVoiceConfig(path: configPath)
        network = try PiperNetwork(modelPath: modelPath, runtime: OnnxRuntime.load(path: onnxRuntimePath))
        phonemizer = EspeakPhonemizer(executable: espeak, voice: config.espeakVoice)
        // One word through espeak-ng and the network: the voice is known to work (an ONNX file
        // that is not a Piper voice fails here, not at the first reply), and onnxruntime's
        // first-run set-up is not paid by the first reply.
        let phonemes = try phonemizer.phonemes(of: "Ready") + "."
        do {
            _ = try network.synthesize(
                phonemeIDs: config.ids(of: phonemes), scales: (config.noiseScale, config.lengthScale, config.noiseWidth), cancellation: PiperCancellation()
            )
        } catch {
            throw LocalModelError.unloadable(kind: "Piper voice", path: modelPath)
        }
        for index in 0..<max(1, workerCount) {
            let thread = Thread { [jobs] in
                Thread.current.name = "parley-piper\(index)"  // From inside: see ServiceLoop.start.
                while true { jobs.next()() }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Synthesises one clause on a worker thread: 16-bit samples at `config.sampleRate`,
    /// peak-normalised as Piper does. Cancelling the calling task stops the network mid-run.
    /// - Parameters:
    ///   - clause: the words and the mark that ended them.
    ///   - lengthScale: the pace; larger is slower.
    /// - Throws: `CancellationError`, or `ProviderError` when espeak-ng or the network fails.
    func synthesize(_ clause: PiperText.Clause, lengthScale: Float) async throws -> [Int16] {
        let cancellation = PiperCancellation()
        let (network, phonemizer, config) = (network, phonemizer, config)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                jobs.enqueue {
                    guard !cancellation.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                    continuation.resume(with: Result {
                        var phonemes = try phonemizer.phonemes(of: clause.words)
                        if let mark = clause.mark { phonemes.append(mark) }
                        let audio = try network.synthesize(
                            phonemeIDs: config.ids(of: phonemes),
                            scales: (config.noiseScale, lengthScale, config.noiseWidth), cancellation: cancellation
                        )
                        return Self.pcm16(audio)
                    })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Piper's conversion: scaled so the loudest sample is at full scale (unless the clause is
    /// nearly silent), then clipped.
    static func pcm16(_ audio: [Float]) -> [Int16] {
        let peak = audio.reduce(Float(0)) { max($0, $1.isFinite ? abs($1) : 0) }
        let gain = 32_767 / max(0.01, peak)
        return audio.map { Int16(max(-32_767, min(32_767, ($0.isFinite ? $0 : 0) * gain))) }
    }
}

/// The FIFO of syntheses shared by the worker threads (which live as long as the process:
/// engines are loaded once and kept).
private final class PiperJobQueue: @unchecked Sendable {  // `condition` guards `pending`.
    private let condition = NSCondition()
    private var pending: [@Sendable () -> Void] = []

    func enqueue(_ job: @escaping @Sendable () -> Void) {
        condition.withLock {
            pending.append(job)
            condition.signal()
        }
    }

    /// Blocks until a job is available.
    func next() -> @Sendable () -> Void {
        condition.withLock {
            while pending.isEmpty { condition.wait() }
            return pending.removeFirst()
        }
    }
}
