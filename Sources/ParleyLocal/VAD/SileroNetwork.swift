import CParleyKernels
import Foundation
import Synchronization

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
    private let inputWeights: [Float]  // [512][128], gates i, f, g, o
    private let hiddenWeights: [Float]  // [512][128]
    private let gateBias: [Float]  // input and hidden biases summed
    private let outputWeights: [Float]  // [128]
    private let outputBias: Float

    private static let loaded = Mutex<[String: SileroNetwork]>([:])

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
        inputWeights = try file.values("_model.decoder.rnn.weight_ih", count: 4 * hidden * hidden)
        hiddenWeights = try file.values("_model.decoder.rnn.weight_hh", count: 4 * hidden * hidden)
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
        let gates = Self.gates(bias: gateBias, inputWeights, features.values, hiddenWeights, state.hidden)
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
        let bins = Self.fourierBins, taps = Self.fourierTaps
        var magnitudes = FeatureMap(channels: bins, length: steps)
        padded.withUnsafeBufferPointer { samples in
            fourierBasis.withUnsafeBufferPointer { basis in
                for step in 0..<steps {
                    let frame = samples.baseAddress! + step * Self.fourierHop
                    for bin in 0..<bins {
                        let real = dot(basis.baseAddress! + bin * taps, frame, taps)
                        let imaginary = dot(basis.baseAddress! + (bins + bin) * taps, frame, taps)
                        magnitudes.values[bin * steps + step] = (real * real + imaginary * imaginary).squareRoot()
                    }
                }
            }
        }
        return magnitudes
    }

    /// The LSTM's gate pre-activations: bias + W_ih·x + W_hh·h.
    private static func gates(bias: [Float], _ inputWeights: [Float], _ input: [Float], _ hiddenWeights: [Float], _ hidden: [Float]) -> [Float] {
        var gates = bias
        let size = hiddenSize
        inputWeights.withUnsafeBufferPointer { wi in
            hiddenWeights.withUnsafeBufferPointer { wh in
                input.withUnsafeBufferPointer { x in
                    hidden.withUnsafeBufferPointer { h in
                        for row in 0..<4 * size {
                            gates[row] += dot(wi.baseAddress! + row * size, x.baseAddress!, size)
                                + dot(wh.baseAddress! + row * size, h.baseAddress!, size)
                        }
                    }
                }
            }
        }
        return gates
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
        var output = FeatureMap(channels: bias.count, length: length)
        var column = [Float](repeating: 0, count: columnLength)
        for step in 0..<length {
            for channel in 0..<inputChannels {
                for tap in 0..<kernel {
                    let position = step * stride + tap - 1
                    column[channel * kernel + tap] =
                        (0..<input.length).contains(position) ? input.values[channel * input.length + position] : 0
                }
            }
            weights.withUnsafeBufferPointer { weights in
                column.withUnsafeBufferPointer { column in
                    for channel in 0..<bias.count {
                        let sum = bias[channel] + dot(weights.baseAddress! + channel * columnLength, column.baseAddress!, columnLength)
                        output.values[channel * length + step] = max(0, sum)
                    }
                }
            }
        }
        return output
    }
}

/// The dot product of `count` floats at `a` and `b`.
@inline(__always)
func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
    parley_dot(a, b, count)
}

@inline(__always)
private func sigmoid(_ value: Float) -> Float {
    1 / (1 + expf(-value))
}
