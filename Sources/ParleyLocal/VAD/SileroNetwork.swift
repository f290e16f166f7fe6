import CParleyKernels
import Foundation
import ParleySync

/// The Silero VAD v6 network, computed in Swift from the weights of whisper.cpp's ggml model
/// file: the same layers whisper.cpp runs, with the weights loaded once and shared by every
/// session (a session keeps only the 256-value recurrent state).
///
/// One step takes a 512-sample window at 16 kHz: reflection-padded by 64 samples on each side,
/// a short-time Fourier transform (a 256-tap convolution with stride 128, magnitudes of 129
/// bins × 4 frames), four convolutions with ReLU (129→128, 128→64 stride 2, 64→64 stride 2,
/// 64→128), an LSTM cell of 128, ReLU, a 1×1 convolution and a sigmoid.
public final class SileroNetwork: Sendable {
    /// The recurrent state one stream of audio carries from window to window.
    public struct State: Sendable {
        var hidden = [Float](repeating: 0, count: SileroNetwork.hiddenSize)
        var cell = [Float](repeating: 0, count: SileroNetwork.hiddenSize)

        /// The state before any audio.
        public init() {}
    }

    /// Samples per window at 16 kHz.
    public static let windowLength = 512
    static let hiddenSize = 128
    static let padding = 64
    static let fourierTaps = 256
    static let fourierHop = 128
    static let fourierBins = 129

    private let fourierBasis: [Float]  // [258][256]: real rows, then imaginary rows
    private let encoder: [Convolution]
    private let gateWeights: [Float]  // [512][256]: gates i, f, g, o; input weights, then hidden weights
    private let gateBias: [Float]  // input and hidden biases summed
    private let outputWeights: [Float]  // [128]
    private let outputBias: Float

    private static let loaded = Locked<[String: SileroNetwork]>([:])

    /// The network in the model file at `path`, loaded once per process and shared.
    /// - Throws: `LocalModelError` when the file is missing or is not a Silero model.
    public static func shared(modelPath path: String) throws -> SileroNetwork {
        if let network = loaded.withLock({ $0[path] }) { return network }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path) else {
            throw LocalModelError.missingFile(kind: "Silero VAD model", path: path)
        }
        let network: SileroNetwork
        do {
            network = try SileroNetwork(file: SileroModelFile(data: data))
        } catch {
            throw LocalModelError.unloadable(kind: "Silero VAD model", path: path)
        }
        return loaded.withLock { cache in
            if let existing = cache[path] { return existing }
            cache[path] = network
            return network
        }
    }

    init(file: SileroModelFile) throws {
        guard file.windowLength == Self.windowLength else {
            throw SileroModelFile.FormatError(reason: "window of \(file.windowLength) samples")
        }
        let hidden = Self.hiddenSize
        fourierBasis = try file.values("_model.stft.forward_basis_buffer", count: 2 * Self.fourierBins * Self.fourierTaps)
        let layers: [(inputs: Int, outputs: Int, stride: Int)] = [(129, 128, 1), (128, 64, 2), (64, 64, 2), (64, 128, 1)]
        encoder = try layers.enumerated().map { index, layer in
            let name = "_model.encoder.\(index).reparam_conv"
            return Convolution(
                weights: try file.values("\(name).weight", count: layer.outputs * layer.inputs * 3),
                bias: try file.values("\(name).bias", count: layer.outputs),
                inputChannels: layer.inputs, stride: layer.stride
            )
        }
        let inputWeights = try file.values("_model.decoder.rnn.weight_ih", count: 4 * hidden * hidden)
        let hiddenWeights = try file.values("_model.decoder.rnn.weight_hh", count: 4 * hidden * hidden)
        var gateWeights: [Float] = []
        gateWeights.reserveCapacity(8 * hidden * hidden)
        for row in 0..<4 * hidden {
            gateWeights += inputWeights[row * hidden..<(row + 1) * hidden]
            gateWeights += hiddenWeights[row * hidden..<(row + 1) * hidden]
        }
        self.gateWeights = gateWeights
        let inputBias = try file.values("_model.decoder.rnn.bias_ih", count: 4 * hidden)
        let hiddenBias = try file.values("_model.decoder.rnn.bias_hh", count: 4 * hidden)
        gateBias = zip(inputBias, hiddenBias).map { $0 + $1 }
        outputWeights = try file.values("_model.decoder.decoder.2.weight", count: hidden)
        outputBias = try file.values("_model.decoder.decoder.2.bias", count: 1)[0]
    }

    /// The probability (0…1) that `window` (512 finite samples) holds speech, given `state`,
    /// which it advances.
    public func speechProbability(of window: [Float], state: inout State) -> Float {
        precondition(window.count == Self.windowLength, "a Silero window is 512 samples")
        var features = spectrum(of: window)
        for layer in encoder { features = layer.apply(to: features) }
        // After the strided layers one time step is left: 128 channels.
        let gates = Self.gates(bias: gateBias, gateWeights, input: features.values + state.hidden)
        let size = Self.hiddenSize
        var output = outputBias
        for unit in 0..<size {
            let input = sigmoid(gates[unit])
            let forget = sigmoid(gates[size + unit])
            let candidate = tanhf(gates[2 * size + unit])
            let outputGate = sigmoid(gates[3 * size + unit])
            let cell = forget * state.cell[unit] + input * candidate
            let hidden = outputGate * tanhf(cell)
            state.cell[unit] = cell
            state.hidden[unit] = hidden
            output += outputWeights[unit] * max(0, hidden)
        }
        return sigmoid(output)
    }

    /// Magnitudes of the short-time Fourier transform: 129 channels × 4 time steps.
    private func spectrum(of window: [Float]) -> FeatureMap {
        let pad = Self.padding, count = window.count
        var padded = [Float](repeating: 0, count: count + 2 * pad)
        for index in 0..<pad {
            padded[index] = window[pad - index]
            padded[pad + count + index] = window[count - 2 - index]
        }
        for index in 0..<count { padded[pad + index] = window[index] }

        let steps = (padded.count - Self.fourierTaps) / Self.fourierHop + 1
        let bins = Self.fourierBins
        // Rows 0..<129 of the basis give the real parts, rows 129..<258 the imaginary ones.
        let parts = dotRows(fourierBasis, rows: 2 * bins, columns: Self.fourierTaps, vectors: padded, stride: Self.fourierHop, count: steps)
        var magnitudes = FeatureMap(channels: bins, length: steps)
        for index in 0..<bins * steps {
            let real = parts[index], imaginary = parts[bins * steps + index]
            magnitudes.values[index] = (real * real + imaginary * imaginary).squareRoot()
        }
        return magnitudes
    }

    /// The LSTM's gate pre-activations: bias + [W_ih W_hh]·[x; h].
    private static func gates(bias: [Float], _ weights: [Float], input: [Float]) -> [Float] {
        let products = dotRows(weights, rows: bias.count, columns: input.count, vectors: input, stride: 0, count: 1)
        return zip(bias, products).map { $0 + $1 }
    }
}

/// Channels × time steps, channel-major.
struct FeatureMap {
    var channels: Int
    var length: Int
    var values: [Float]

    init(channels: Int, length: Int) {
        self.channels = channels
        self.length = length
        values = [Float](repeating: 0, count: channels * length)
    }
}

/// A 1-D convolution with kernel 3, padding 1 and ReLU, weights `[out][in][3]`.
struct Convolution {
    var weights: [Float]
    var bias: [Float]
    var inputChannels: Int
    var stride: Int

    func apply(to input: FeatureMap) -> FeatureMap {
        let kernel = 3, columnLength = inputChannels * kernel
        let length = (input.length + 2 - kernel) / stride + 1
        // One column of the inputs each output step sees, all steps side by side.
        var columns = [Float](repeating: 0, count: columnLength * length)
        for step in 0..<length {
            for channel in 0..<inputChannels {
                for tap in 0..<kernel {
                    let position = step * stride + tap - 1
                    columns[step * columnLength + channel * kernel + tap] =
                        (0..<input.length).contains(position) ? input.values[channel * input.length + position] : 0
                }
            }
        }
        let sums = dotRows(weights, rows: bias.count, columns: columnLength, vectors: columns, stride: columnLength, count: length)
        var output = FeatureMap(channels: bias.count, length: length)
        for channel in 0..<bias.count {
            for step in 0..<length {
                output.values[channel * length + step] = max(0, bias[channel] + sums[channel * length + step])
            }
        }
        return output
    }
}

/// Every row of the row-major `rows` × `columns` `matrix` times each of `count` vectors of
/// `columns` floats in `vectors`, the v-th at offset v × `stride`: `result[row * count + v]`.
func dotRows(_ matrix: [Float], rows: Int, columns: Int, vectors: [Float], stride: Int, count: Int) -> [Float] {
    precondition(matrix.count >= rows * columns && vectors.count >= (count - 1) * stride + columns)
    return [Float](unsafeUninitializedCapacity: rows * count) { result, initialized in
        matrix.withUnsafeBufferPointer { matrix in
            vectors.withUnsafeBufferPointer { vectors in
                parley_dot_rows(matrix.baseAddress!, rows, columns, vectors.baseAddress!, stride, count, result.baseAddress!)
            }
        }
        initialized = rows * count
    }
}

@inline(__always)
private func sigmoid(_ value: Float) -> Float {
    1 / (1 + expf(-value))
}
