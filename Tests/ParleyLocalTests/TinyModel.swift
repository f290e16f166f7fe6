import Foundation
import ParleyTesting

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
    static func path() async throws -> String {
        try await writing.value
    }

    /// The one run of the script. It is awaited, never waited for: a test blocking a thread
    /// of the cooperative pool (two on a 2-core machine) can stall every other test.
    private static let writing = Task<String, any Error> {
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-tiny-\(ProcessInfo.processInfo.processIdentifier).gguf").path
        let process = Subprocess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [repositoryRoot.appendingPathComponent("scripts/make-tiny-llama-gguf.py").path, output]
        let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        guard status == 0 else { throw TinyModelError(status: status, python: python) }
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
