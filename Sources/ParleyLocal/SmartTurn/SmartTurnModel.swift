import Foundation
import ParleyCore
import ParleySync

/// End-of-turn detection with the open Smart Turn v3.2 model (pipecat, BSD-2-Clause): from the
/// last 8 s of a person's audio, the probability that they finished their thought, so a pause
/// mid-sentence ("I'd like to book a flight to …") is told from the end of a question.
///
/// The network runs natively (no ONNX runtime), from the weights `scripts/setup` converts; a
/// call is about 7 GFLOP of matrix products plus element-wise work, all in C kernels compiled
/// optimised even in debug builds. Measured on one core of the 2-core development machine
/// (`ParleyBenchmarks --only turns`, release): 105 ms a call, of which the matrix products take
/// about 80 ms; 0.15 s in a debug build. The weights (8.6 MB) are loaded once per process and
/// shared by every session.
///
/// ```swift
/// let model = try SmartTurnModel(modelPath: ModelLocator().path(of: .smartTurn))
/// let finished = model.completionProbability(of: samples16kHz) > 0.5
/// ```
public struct SmartTurnModel: TurnCompletionModel {
    /// Smart Turn runs at 16 kHz.
    public let sampleRate = SmartTurnFeatures.sampleRate

    private let network: SmartTurnNetwork

    private static let loaded = Locked<[String: SmartTurnNetwork]>([:])

    /// The model in the file at `modelPath` (converted by `scripts/convert-smart-turn-onnx.py`),
    /// loaded once per process.
    /// - Throws: `LocalModelError` when the file is missing or is not a Smart Turn model.
    public init(modelPath path: String) throws {
        if let network = Self.loaded.withLock({ $0[path] }) {
            self.network = network
            return
        }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path) else {
            throw LocalModelError.missingFile(kind: "Smart Turn model", path: path)
        }
        let network: SmartTurnNetwork
        do {
            network = try SmartTurnNetwork(file: SmartTurnModelFile(data: data))
        } catch {
            throw LocalModelError.unloadable(kind: "Smart Turn model", path: path)
        }
        self.network = Self.loaded.withLock { cache in
            if let existing = cache[path] { return existing }
            cache[path] = network
            return network
        }
    }

    /// The probability (0…1) that the speech in `samples` (16 kHz; only the last 8 s count) is
    /// a finished turn. Non-finite samples count as silence.
    public func completionProbability(of samples: [Float]) -> Float {
        let probability = network.completionProbability(of: samples.suffix(SmartTurnFeatures.sampleCount).map { $0.isFinite ? $0 : 0 })
        return probability.isFinite ? probability : 0
    }
}
