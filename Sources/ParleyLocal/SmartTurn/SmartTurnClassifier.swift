import CParleyKernels
import Foundation

/// Smart Turn's attention pooling: a score per frame (384 → 256, tanh, → 1), softmax over the
/// frames, and the frames' weighted sum, rounded like the int8 model rounds it.
struct AttentionPooling {
    private let hidden: Linear
    private let hiddenRounding: ActivationRounding
    private let hiddenActivationRounding: ActivationRounding
    private let score: Linear
    private let scoreRounding: ActivationRounding
    private let outputRounding: ActivationRounding

    init(file: SmartTurnModelFile) throws {
        hidden = try Linear(file: file, name: "pool.hidden", inputs: SmartTurnNetwork.width, outputs: 256)
        hiddenRounding = try file.rounding("pool.hidden.output")
        hiddenActivationRounding = try file.rounding("pool.hidden.activation")
        score = try Linear(file: file, name: "pool.score", inputs: 256, outputs: 1)
        scoreRounding = try file.rounding("pool.score.output")
        outputRounding = try file.rounding("pool.output")
    }

    /// One row of 384: the encoded frames weighted by their attention.
    func pool(_ encoded: Activations) -> Activations {
        var activations = hidden.product(encoded)
        activations.round(hiddenRounding)
        activations.addRowwise(hidden.bias)
        activations.tanh()
        activations.round(hiddenActivationRounding)
        var scores = score.product(activations)
        scores.round(scoreRounding)
        scores.addRowwise(score.bias)
        scores.values.withUnsafeMutableBufferPointer { parley_softmax_rows($0.baseAddress!, 1, $0.count) }

        var pooled = Activations(
            rows: 1, columns: encoded.columns,
            values: matrixProduct(scores.values, rowStride: encoded.rows, encoded.values, rows: 1, inner: encoded.rows, columns: encoded.columns)
        )
        pooled.round(outputRounding)
        return pooled
    }
}

/// Smart Turn's classifier: 384 → 256, layer norm, GELU, → 64, GELU, → 1, sigmoid, with the
/// int8 model's rounding after each step.
struct Classifier {
    private let first: Linear
    private let firstRounding: ActivationRounding
    private let norm: Norm
    private let firstActivationRounding: ActivationRounding
    private let second: Linear
    private let secondRounding: ActivationRounding
    private let secondActivationRounding: ActivationRounding
    private let last: Linear
    private let lastRounding: ActivationRounding

    init(file: SmartTurnModelFile) throws {
        first = try Linear(file: file, name: "classifier.0", inputs: SmartTurnNetwork.width, outputs: 256)
        firstRounding = try file.rounding("classifier.0.output")
        norm = try Norm(file: file, name: "classifier.norm", width: 256)
        firstActivationRounding = try file.rounding("classifier.0.activation")
        second = try Linear(file: file, name: "classifier.1", inputs: 256, outputs: 64)
        secondRounding = try file.rounding("classifier.1.output")
        secondActivationRounding = try file.rounding("classifier.1.activation")
        last = try Linear(file: file, name: "classifier.2", inputs: 64, outputs: 1)
        lastRounding = try file.rounding("classifier.2.output")
    }

    /// The probability that the turn is complete.
    func probability(of pooled: Activations) -> Float {
        var x = first.product(pooled)
        x.addRowwise(first.bias)
        x.round(firstRounding)
        norm.apply(to: &x)
        x.gelu()
        x.round(firstActivationRounding)
        x = second.product(x)
        x.addRowwise(second.bias)
        x.round(secondRounding)
        x.gelu()
        x.round(secondActivationRounding)
        x = last.product(x)
        x.addRowwise(last.bias)
        x.round(lastRounding)
        return 1 / (1 + expf(-x.values[0]))
    }
}
