import COnnxRuntime
import Foundation
import ParleyCore

/// A Piper (VITS) voice's ONNX network in an onnxruntime session: phoneme ids in, audio out.
///
/// The session uses one intra-op thread and no spinning, so a synthesis occupies exactly the
/// thread that runs it (a worker of `PiperEngine`). Runs may overlap: onnxruntime sessions are
/// safe to run from several threads at once.
final class PiperNetwork: @unchecked Sendable {  // Immutable after init; onnxruntime sessions are thread-safe to run.
    private let runtime: OnnxRuntime
    private let session: OpaquePointer
    private let memoryInfo: OpaquePointer
    private let inputNames: [UnsafeMutablePointer<CChar>]
    private let outputName: UnsafeMutablePointer<CChar>

    /// Loads the network at `modelPath`.
    /// - Throws: `LocalModelError.unloadable` when onnxruntime rejects the file.
    init(modelPath: String, runtime: OnnxRuntime) throws {
        self.runtime = runtime
        let api = runtime.api
        var options: OpaquePointer?
        try runtime.check(api.CreateSessionOptions!(&options), "creating session options")
        defer { api.ReleaseSessionOptions!(options) }
        try runtime.check(api.SetIntraOpNumThreads!(options, 1), "setting the intra-op threads")
        try runtime.check(api.SetInterOpNumThreads!(options, 1), "setting the inter-op threads")
        try runtime.check(api.SetSessionGraphOptimizationLevel!(options, ORT_ENABLE_ALL), "setting the optimisation level")
        try runtime.check(api.AddSessionConfigEntry!(options, "session.intra_op.allow_spinning", "0"), "turning spinning off")
        var session: OpaquePointer?
        if let status = api.CreateSession!(runtime.environment, modelPath, options, &session) {
            _ = try? runtime.check(status, "loading")
            throw LocalModelError.unloadable(kind: "Piper voice", path: modelPath)
        }
        var memoryInfo: OpaquePointer?
        if let status = api.CreateCpuMemoryInfo!(OrtArenaAllocator, OrtMemTypeDefault, &memoryInfo) {
            api.ReleaseSession!(session)
            try runtime.check(status, "describing CPU memory")
        }
        self.session = session!
        self.memoryInfo = memoryInfo!
        inputNames = ["input", "input_lengths", "scales"].map { (name: String) in strdup(name)! }
        outputName = strdup("output")!
    }

    deinit {
        runtime.api.ReleaseMemoryInfo!(memoryInfo)
        runtime.api.ReleaseSession!(session)
        inputNames.forEach { free($0) }
        free(outputName)
    }

    /// Synthesises the audio of one utterance.
    /// - Parameters:
    ///   - phonemeIDs: the utterance's ids, with Piper's start, padding and end ids.
    ///   - scales: noise scale, length scale (larger is slower) and noise width.
    ///   - cancellation: terminates the run when cancelled.
    /// - Returns: the samples at the voice's rate, as the network made them (roughly -1…1).
    /// - Throws: `CancellationError` when cancelled, `ProviderError` when the run fails.
    func synthesize(phonemeIDs: [Int64], scales: (noise: Float, length: Float, noiseWidth: Float), cancellation: PiperCancellation) throws -> [Float] {
        let api = runtime.api
        var runOptions: OpaquePointer?
        try runtime.check(api.CreateRunOptions!(&runOptions), "creating run options")
        defer { api.ReleaseRunOptions!(runOptions) }
        guard cancellation.attach(api: api, runOptions: runOptions!) else { throw CancellationError() }
        defer { cancellation.detach() }

        var ids = phonemeIDs
        var lengths = [Int64(phonemeIDs.count)]
        var scaleValues = [scales.noise, scales.length, scales.noiseWidth]
        var idsShape: [Int64] = [1, Int64(phonemeIDs.count)]
        var lengthsShape: [Int64] = [1]
        var scalesShape: [Int64] = [3]
        var inputs: [OpaquePointer?] = [nil, nil, nil]
        defer { inputs.forEach { api.ReleaseValue!($0) } }
        inputs[0] = try tensor(&ids, shape: &idsShape, type: ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64)
        inputs[1] = try tensor(&lengths, shape: &lengthsShape, type: ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64)
        inputs[2] = try tensor(&scaleValues, shape: &scalesShape, type: ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)

        var output: OpaquePointer?
        let names = inputNames.map { UnsafePointer<CChar>?($0) }
        var outputNames: [UnsafePointer<CChar>?] = [UnsafePointer(outputName)]
        // `ids`, `lengths` and `scaleValues` back the input tensors: keep them alive through the run.
        let status = withExtendedLifetime((ids, lengths, scaleValues)) {
            api.Run!(session, runOptions, names, inputs, 3, &outputNames, 1, &output)
        }
        defer { api.ReleaseValue!(output) }
        if cancellation.isCancelled {
            if let status { api.ReleaseStatus!(status) }
            throw CancellationError()
        }
        try runtime.check(status, "running the voice")
        return try samples(of: output!)
    }

    private func tensor<Element>(_ values: inout [Element], shape: inout [Int64], type: ONNXTensorElementDataType) throws -> OpaquePointer {
        var value: OpaquePointer?
        let status = values.withUnsafeMutableBytes { bytes in
            runtime.api.CreateTensorWithDataAsOrtValue!(memoryInfo, bytes.baseAddress, bytes.count, &shape, shape.count, type, &value)
        }
        try runtime.check(status, "making an input tensor")
        return value!
    }

    private func samples(of output: OpaquePointer) throws -> [Float] {
        let api = runtime.api
        var shapeInfo: OpaquePointer?
        try runtime.check(api.GetTensorTypeAndShape!(output, &shapeInfo), "reading the output shape")
        defer { api.ReleaseTensorTypeAndShapeInfo!(shapeInfo) }
        var count = 0
        try runtime.check(api.GetTensorShapeElementCount!(shapeInfo, &count), "counting the output")
        var elementType = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED
        try runtime.check(api.GetTensorElementType!(shapeInfo, &elementType), "reading the output type")
        guard elementType == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT else {
            throw ProviderError(.server, provider: "piper", message: "the voice's output is not float audio")
        }
        var data: UnsafeMutableRawPointer?
        try runtime.check(api.GetTensorMutableData!(output, &data), "reading the output")
        guard let data, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: count))
    }
}

/// Stops one synthesis: before its run starts, or during it through onnxruntime's terminate
/// flag on the run's options.
final class PiperCancellation: @unchecked Sendable {  // `lock` guards `isCancelledValue` and `runOptions`.
    private let lock = NSLock()
    private var isCancelledValue = false
    private var runOptions: (api: OrtApi, options: OpaquePointer)?

    /// Whether `cancel()` was called.
    var isCancelled: Bool { lock.withLock { isCancelledValue } }

    /// Stops the run now or, if none is running, the next one before it starts.
    func cancel() {
        lock.withLock {
            isCancelledValue = true
            if let runOptions { _ = runOptions.api.RunOptionsSetTerminate!(runOptions.options) }
        }
    }

    /// Registers a run's options; `false` when already cancelled (do not run).
    func attach(api: OrtApi, runOptions options: OpaquePointer) -> Bool {
        lock.withLock {
            runOptions = (api, options)
            return !isCancelledValue
        }
    }

    /// Forgets the run's options before they are released.
    func detach() {
        lock.withLock { runOptions = nil }
    }
}
