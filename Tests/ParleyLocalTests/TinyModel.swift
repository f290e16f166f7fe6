import Foundation

/// A tiny random-weight llama GGUF written at test time by scripts/make-tiny-llama-gguf.py with
/// the `gguf` package from Parley's virtualenv ($PARLEY_PYTHON).
enum TinyModel {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let python: String = {
        if let configured = ProcessInfo.processInfo.environment["PARLEY_PYTHON"], !configured.isEmpty { return configured }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/parley/venv/bin/python").path
    }()

    /// Writes the model once per test process and returns its path.
    static let path: Result<String, any Error> = Result {
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-tiny-\(ProcessInfo.processInfo.processIdentifier).gguf").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [repositoryRoot.appendingPathComponent("scripts/make-tiny-llama-gguf.py").path, output]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TinyModelError(status: process.terminationStatus, python: python) }
        return output
    }

    struct TinyModelError: Error, CustomStringConvertible {
        var status: Int32
        var python: String
        var description: String {
            "make-tiny-llama-gguf.py failed (status \(status)) with \(python); run scripts/setup to create the virtualenv"
        }
    }
}
