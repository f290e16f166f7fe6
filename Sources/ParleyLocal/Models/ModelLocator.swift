import Foundation

/// Finds the model files and programs of the embedded stack, with errors that say how to get
/// what is missing.
///
/// Models live in `PARLEY_MODEL_DIR` (default `~/.cache/parley/models`), where
/// `scripts/setup` puts them. `llama-server` comes from `PARLEY_LLAMA_SERVER` (default
/// `~/.cache/parley/prefix/bin/llama-server`), onnxruntime's library from
/// `PARLEY_ONNXRUNTIME_LIBRARY` (default `~/.cache/parley/prefix/lib/libonnxruntime.so`).
///
/// ```swift
/// let locator = ModelLocator()
/// let whisperPath = try locator.path(of: .whisperTinyEnglish)
/// ```
public struct ModelLocator: Sendable, Hashable {
    /// A model file the embedded stack knows by name.
    public struct Model: Sendable, Hashable {
        /// The file name inside the model directory.
        public var fileName: String
        /// What the model is for, in words, for error messages.
        public var purpose: String

        /// Creates a model description.
        public init(fileName: String, purpose: String) {
            self.fileName = fileName
            self.purpose = purpose
        }

        /// Whisper tiny.en in whisper.cpp's ggml format (speech-to-text).
        public static let whisperTinyEnglish = Model(fileName: "ggml-tiny.en.bin", purpose: "Whisper speech-to-text")
        /// Whisper base (multilingual) in whisper.cpp's ggml format (speech-to-text).
        public static let whisperBase = Model(fileName: "ggml-base.bin", purpose: "Whisper base speech-to-text")
        /// Silero VAD v6.2 in ggml format (voice activity detection).
        public static let sileroVAD = Model(fileName: "ggml-silero-v6.2.0.bin", purpose: "Silero voice activity detection")
        /// Smart Turn v3.2, converted from pipecat's int8 ONNX file (end-of-turn detection).
        public static let smartTurn = Model(fileName: "smart-turn-v3.2.bin", purpose: "Smart Turn end-of-turn detection")
        /// SmolLM2-135M-Instruct, requantised by setup from the packaged Q4_1 GGUF to Q8_0 (the default local language model).
        public static let smolLM2 = Model(fileName: "SmolLM2-135M-Instruct.Q8_0.gguf", purpose: "the local language model")
        /// The Piper voice en_US-joe-medium (VITS, ONNX; its config is the same name + `.json`).
        public static let piperJoe = Model(fileName: "en_US-joe-medium.onnx", purpose: "the Piper voice en_US-joe-medium")
    }

    /// The directory holding model files.
    public var modelDirectory: URL
    /// The `llama-server` executable.
    public var llamaServer: URL
    /// onnxruntime's shared library (the Piper voice runs on it).
    public var onnxRuntimeLibrary: URL

    /// Creates a locator from explicit locations; onnxruntime's library defaults to setup's.
    public init(modelDirectory: URL, llamaServer: URL, onnxRuntimeLibrary: URL? = nil) {
        self.modelDirectory = modelDirectory
        self.llamaServer = llamaServer
        self.onnxRuntimeLibrary = onnxRuntimeLibrary ?? llamaServer.deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("lib/libonnxruntime.so")
    }

    /// Creates a locator from `PARLEY_MODEL_DIR` and `PARLEY_LLAMA_SERVER`, falling back to
    /// the locations `scripts/setup` installs to.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        let cache = home.appendingPathComponent(".cache/parley")
        let modelDirectory = environment["PARLEY_MODEL_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            .map { URL(fileURLWithPath: $0) } ?? cache.appendingPathComponent("models")
        let llamaServer = environment["PARLEY_LLAMA_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            .map { URL(fileURLWithPath: $0) } ?? cache.appendingPathComponent("prefix/bin/llama-server")
        let onnxRuntime = environment["PARLEY_ONNXRUNTIME_LIBRARY"].flatMap { $0.isEmpty ? nil : $0 }
            .map { URL(fileURLWithPath: $0) } ?? cache.appendingPathComponent("prefix/lib/libonnxruntime.so")
        self.init(modelDirectory: modelDirectory, llamaServer: llamaServer, onnxRuntimeLibrary: onnxRuntime)
    }

    /// The path of `model`, checked to be a readable file.
    /// - Throws: `LocalModelError.missingFile` naming the file and how to install it.
    public func path(of model: Model) throws -> String {
        let url = modelDirectory.appendingPathComponent(model.fileName)
        try Self.requireFile(url, kind: "model file for \(model.purpose)", executable: false)
        return url.path
    }

    /// The path of the `llama-server` executable, checked to be executable.
    /// - Throws: `LocalModelError.missingFile` naming the path and how to install it.
    public func llamaServerPath() throws -> String {
        try Self.requireFile(llamaServer, kind: "llama-server executable", executable: true)
        return llamaServer.path
    }

    /// The path of onnxruntime's shared library, checked to be readable.
    /// - Throws: `LocalModelError.missingFile` naming the path and how to install it.
    public func onnxRuntimeLibraryPath() throws -> String {
        try Self.requireFile(onnxRuntimeLibrary, kind: "onnxruntime library", executable: false)
        return onnxRuntimeLibrary.path
    }

    private static func requireFile(_ url: URL, kind: String, executable: Bool) throws {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        let usable = exists && !isDirectory.boolValue
            && (executable ? FileManager.default.isExecutableFile(atPath: url.path)
                : FileManager.default.isReadableFile(atPath: url.path))
        if !usable {
            throw LocalModelError.missingFile(kind: kind, path: url.path)
        }
    }
}
