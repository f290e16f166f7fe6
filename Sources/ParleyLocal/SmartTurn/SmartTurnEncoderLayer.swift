import CParleyKernels
import Foundation

/// One pre-norm transformer layer of the Smart Turn encoder: self-attention with 6 heads of 64,
/// then a 1536-wide GELU MLP, each added to the residual stream, with the int8 model's rounding
/// points in between.
struct EncoderLayer {
    private let attentionNorm: Norm
    private let attentionNormRounding: ActivationRounding
    private let query: Projection
    private let key: Projection
    private let value: Projection
    /// Query and key are both scaled by 64^-1/4 (so their product is scaled by 1/8).
    private let scale: Float
    private let scoresRounding: ActivationRounding
    private let weightsRounding: ActivationRounding
    private let mixedRounding: ActivationRounding
    private let output: Projection
    private let mlpNorm: Norm
    private let mlpNormRounding: ActivationRounding
    private let expand: Projection
    private let expandActivationRounding: ActivationRounding
    private let contract: Projection

    /// A matrix product whose result is rounded, then gets its bias (when it has one), then is
    /// rounded again where the model splits it into heads.
    private struct Projection {
        var linear: Linear
        var rounding: ActivationRounding
        var headRounding: ActivationRounding?

        init(file: SmartTurnModelFile, name: String, inputs: Int, outputs: Int, hasBias: Bool = true, heads: Bool = false) throws {
            linear = try Linear(file: file, name: name, inputs: inputs, outputs: outputs, hasBias: hasBias)
            rounding = try file.rounding("\(name).output")
            headRounding = heads ? try file.rounding("\(name).heads") : nil
        }

        func apply(to input: Activations) -> Activations {
            var result = linear.product(input)
            result.round(rounding)
            if !linear.bias.isEmpty { result.addRowwise(linear.bias) }
            return result
        }
    }

    init(file: SmartTurnModelFile, prefix: String, scale: Float) throws {
        let width = SmartTurnNetwork.width, hidden = SmartTurnNetwork.hiddenWidth
        attentionNorm = try Norm(file: file, name: "\(prefix).attention_norm", width: width)
        attentionNormRounding = try file.rounding("\(prefix).attention_norm.output")
        query = try Projection(file: file, name: "\(prefix).query", inputs: width, outputs: width, heads: true)
        key = try Projection(file: file, name: "\(prefix).key", inputs: width, outputs: width, hasBias: false, heads: true)
        value = try Projection(file: file, name: "\(prefix).value", inputs: width, outputs: width, heads: true)
        self.scale = scale
        scoresRounding = try file.rounding("\(prefix).scores")
        weightsRounding = try file.rounding("\(prefix).weights")
        mixedRounding = try file.rounding("\(prefix).mixed")
        output = try Projection(file: file, name: "\(prefix).out", inputs: width, outputs: width)
        mlpNorm = try Norm(file: file, name: "\(prefix).mlp_norm", width: width)
        mlpNormRounding = try file.rounding("\(prefix).mlp_norm.output")
        expand = try Projection(file: file, name: "\(prefix).fc1", inputs: width, outputs: hidden)
        expandActivationRounding = try file.rounding("\(prefix).fc1.activation")
        contract = try Projection(file: file, name: "\(prefix).fc2", inputs: hidden, outputs: width)
    }

    func apply(to x: inout Activations) {
        var normed = x
        attentionNorm.apply(to: &normed)
        normed.round(attentionNormRounding)
        x.add(attention(normed).values)

        normed = x
        mlpNorm.apply(to: &normed)
        normed.round(mlpNormRounding)
        var hidden = expand.apply(to: normed)
        hidden.gelu()
        hidden.round(expandActivationRounding)
        x.add(contract.apply(to: hidden).values)
    }

    private func attention(_ normed: Activations) -> Activations {
        var queries = query.apply(to: normed), keys = key.apply(to: normed), values = value.apply(to: normed)
        queries.scale(by: scale)
        keys.scale(by: scale)
        queries.round(query.headRounding!)
        keys.round(key.headRounding!)
        values.round(value.headRounding!)

        let frames = normed.rows, width = SmartTurnNetwork.width, headWidth = SmartTurnNetwork.headWidth
        // Keys transposed, [384][frames], so each head's keys are the rows of B.
        let transposedKeys = [Float](unsafeUninitializedCapacity: width * frames) { transposed, initialized in
            parley_transpose(keys.values, frames, width, transposed.baseAddress!)
            initialized = width * frames
        }
        var mixed = Activations(rows: frames, columns: width, values: [Float](repeating: 0, count: frames * width))
        var scores = [Float](repeating: 0, count: frames * frames)
        for head in 0..<SmartTurnNetwork.heads {
            let offset = head * headWidth
            queries.values.withUnsafeBufferPointer { q in
                transposedKeys.withUnsafeBufferPointer { k in
                    scores.withUnsafeMutableBufferPointer { s in
                        parley_matmul(q.baseAddress! + offset, width, k.baseAddress! + offset * frames, frames, s.baseAddress!, frames, frames, frames, headWidth)
                        parley_round_to_uint8_steps(s.baseAddress!, s.count, scoresRounding.scale, scoresRounding.zeroPoint)
                        parley_softmax_rows(s.baseAddress!, frames, frames)
                        parley_round_to_uint8_steps(s.baseAddress!, s.count, weightsRounding.scale, weightsRounding.zeroPoint)
                    }
                }
            }
            scores.withUnsafeBufferPointer { s in
                values.values.withUnsafeBufferPointer { v in
                    mixed.values.withUnsafeMutableBufferPointer { m in
                        parley_matmul(s.baseAddress!, frames, v.baseAddress! + offset, width, m.baseAddress! + offset, width, frames, headWidth, frames)
                    }
                }
            }
        }
        mixed.round(mixedRounding)
        return output.apply(to: mixed)
    }
}
