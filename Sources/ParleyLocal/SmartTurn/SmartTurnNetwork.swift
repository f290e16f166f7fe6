import CParleyKernels
import Foundation

/// The Smart Turn v3.2 network, computed in Swift (every loop over activations in C) from the weights of
/// pipecat's int8 ONNX model: a Whisper-tiny encoder (two convolutions, four transformer layers
/// of 384 with 6 heads) over 8 s of log-mel features, attention pooling over the 400 frames and
/// a small classifier, ending in the probability that the speaker has finished their turn.
///
/// The published model rounds activations to 8 bits at 80 fixed points between the layers; the
/// network rounds at the same points with the same scales, because the result depends on it
/// (without the rounding a probability of 0.96 came out as 0.47). Weights are the int8 values
/// times their per-channel scales, multiplied in Float32.
final class SmartTurnNetwork: Sendable {
    static let frames = 400
    static let width = 384
    static let heads = 6
    static let headWidth = 64
    static let hiddenWidth = 1536

    private let features = SmartTurnFeatures()
    private let inputRounding: ActivationRounding
    private let convolution1: TimeConvolution
    private let convolution2: TimeConvolution
    private let positions: [Float]
    private let layers: [EncoderLayer]
    private let finalNorm: Norm
    private let finalRounding: ActivationRounding
    private let pooling: AttentionPooling
    private let classifier: Classifier

    init(file: SmartTurnModelFile) throws {
        let width = Self.width
        inputRounding = try file.rounding("input.rounding")
        convolution1 = try TimeConvolution(file: file, name: "conv1", inputs: SmartTurnFeatures.melCount, stride: 1, activationRounding: file.rounding("conv1.activation"))
        convolution2 = try TimeConvolution(file: file, name: "conv2", inputs: width, stride: 2, activationRounding: nil)
        positions = try file.floats("positions", count: Self.frames * width)
        let scale = try file.floats("attention.scale", count: 1)[0]
        layers = try (0..<4).map { try EncoderLayer(file: file, prefix: "layers.\($0)", scale: scale) }
        finalNorm = try Norm(file: file, name: "final_norm", width: width)
        finalRounding = try file.rounding("final_norm.output")
        pooling = try AttentionPooling(file: file)
        classifier = try Classifier(file: file)
    }

    /// The probability (0…1) that the speech in `audio` (16 kHz, the last 8 s count) is a
    /// finished turn.
    func completionProbability(of audio: [Float]) -> Float {
        var input = Activations(rows: SmartTurnFeatures.frameCount, columns: SmartTurnFeatures.melCount, values: features.features(of: audio))
        input.round(inputRounding)
        var x = convolution2.apply(to: convolution1.apply(to: input))
        x.add(positions)
        for layer in layers { layer.apply(to: &x) }
        finalNorm.apply(to: &x)
        x.round(finalRounding)
        return classifier.probability(of: pooling.pool(x))
    }
}

/// The 8-bit rounding the int8 model applies to an activation: to the nearest of 256 steps of
/// `scale` around `zeroPoint`, clamped to the range.
struct ActivationRounding {
    var scale: Float
    var zeroPoint: Float
}

/// A row-major matrix of activations: one row per frame.
struct Activations {
    var rows: Int
    var columns: Int
    var values: [Float]

    mutating func round(_ rounding: ActivationRounding) {
        values.withUnsafeMutableBufferPointer {
            parley_round_to_uint8_steps($0.baseAddress!, $0.count, rounding.scale, rounding.zeroPoint)
        }
    }

    /// Adds `bias` (one value per column) to every row.
    mutating func addRowwise(_ bias: [Float]) {
        values.withUnsafeMutableBufferPointer { parley_add_to_rows($0.baseAddress!, rows, columns, bias) }
    }

    /// Adds `other`, element by element (the same shape).
    mutating func add(_ other: [Float]) {
        precondition(other.count == values.count)
        values.withUnsafeMutableBufferPointer { parley_add($0.baseAddress!, other, $0.count) }
    }

    mutating func scale(by factor: Float) {
        values.withUnsafeMutableBufferPointer { parley_scale($0.baseAddress!, $0.count, factor) }
    }

    mutating func tanh() {
        values.withUnsafeMutableBufferPointer { parley_tanh($0.baseAddress!, $0.count) }
    }

    mutating func gelu() {
        values.withUnsafeMutableBufferPointer { parley_gelu($0.baseAddress!, $0.count) }
    }
}

/// A weight matrix [inputs][outputs] and its bias.
struct Linear {
    var weight: [Float]
    var bias: [Float]
    var inputs: Int
    var outputs: Int

    /// `hasBias: false` for products without a bias (the attention's keys).
    init(file: SmartTurnModelFile, name: String, inputs: Int, outputs: Int, hasBias: Bool = true) throws {
        weight = try file.weight(name, inputs: inputs, outputs: outputs)
        bias = hasBias ? try file.floats("\(name).bias", count: outputs) : []
        self.inputs = inputs
        self.outputs = outputs
    }

    /// `input` × weight, without the bias.
    func product(_ input: Activations) -> Activations {
        Activations(rows: input.rows, columns: outputs, values: matrixProduct(input.values, rowStride: inputs, weight, rows: input.rows, inner: inputs, columns: outputs))
    }
}

/// Layer normalisation over each row.
struct Norm {
    var weight: [Float]
    var bias: [Float]

    init(file: SmartTurnModelFile, name: String, width: Int) throws {
        weight = try file.floats("\(name).weight", count: width)
        bias = try file.floats("\(name).bias", count: width)
    }

    func apply(to x: inout Activations) {
        let columns = x.columns
        x.values.withUnsafeMutableBufferPointer { values in
            parley_layer_norm(values.baseAddress!, values.count / columns, columns, weight, bias, 1e-5)
        }
    }
}

/// A convolution over time (kernel 3, padding 1) with bias, output rounding and GELU (rounded
/// again when `activationRounding` is given).
struct TimeConvolution {
    var linear: Linear
    var stride: Int
    var outputRounding: ActivationRounding
    var activationRounding: ActivationRounding?

    init(file: SmartTurnModelFile, name: String, inputs: Int, stride: Int, activationRounding: ActivationRounding?) throws {
        linear = try Linear(file: file, name: name, inputs: inputs * 3, outputs: SmartTurnNetwork.width)
        self.stride = stride
        outputRounding = try file.rounding("\(name).output")
        self.activationRounding = activationRounding
    }

    func apply(to input: Activations) -> Activations {
        let channels = input.columns, length = (input.rows - 1) / stride + 1
        // Each output step sees three input frames; channel-major, like the weights.
        let columns = [Float](unsafeUninitializedCapacity: length * channels * 3) { columns, initialized in
            parley_convolution_columns(input.values, input.rows, channels, stride, length, columns.baseAddress!)
            initialized = length * channels * 3
        }
        var output = linear.product(Activations(rows: length, columns: channels * 3, values: columns))
        output.addRowwise(linear.bias)
        output.round(outputRounding)
        output.gelu()
        if let activationRounding { output.round(activationRounding) }
        return output
    }
}
