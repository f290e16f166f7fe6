#if canImport(SwiftUI)
import AVFoundation
import Foundation
import ParleyCore
import Speech

/// On-device speech-to-text with `SFSpeechRecognizer`, for systems before iOS 26 / macOS 26
/// (`SpeechAnalyzerRecognizer` is preferred where it exists): a `SpeechRecognizer` for a
/// session that runs on the device.
///
/// Call `requestAuthorization()` once before use; an unauthorised recognizer throws a clear
/// `ProviderError` instead of returning nothing.
public struct SFSpeechBufferRecognizer: ParleyCore.SpeechRecognizer {
    public let sampleRate = 16_000
    public let supportsPartials = false
    /// The language spoken.
    public var locale: Locale

    /// Creates a recognizer for `locale`.
    public init(locale: Locale = .current) {
        self.locale = locale
    }

    /// Asks the person to allow speech recognition; returns whether it is allowed.
    public static func requestAuthorization() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            SFSpeechRecognizer.requestAuthorization { status in continuation.resume(returning: status == .authorized) }
        }
    }

    public func transcribe(_ samples: [Float], isFinal: Bool) async throws -> ParleyCore.Transcription {
        guard SFSpeechRecognizer.authorizationStatus() == .authorized else {
            throw ProviderError(.authentication, provider: Self.provider, message: "Speech recognition is not allowed for this app; allow it in Settings.")
        }
        guard let recognizer = SFSpeechRecognizer(locale: locale), recognizer.isAvailable else {
            throw ProviderError(.connectivity, provider: Self.provider, message: "Speech recognition for \(locale.identifier) is not available right now.")
        }
        guard let buffer = PCMConverter.buffer(samples, sampleRate: Double(sampleRate)) else {
            throw ProviderError(.invalidRequest, provider: Self.provider, message: "The audio could not be prepared for recognition.")
        }
        let request = SFSpeechAudioBufferRecognitionRequest()
        request.shouldReportPartialResults = false
        request.requiresOnDeviceRecognition = recognizer.supportsOnDeviceRecognition
        request.append(buffer)
        request.endAudio()
        let started = Date()
        let run = RecognitionRun()
        let text = try await withTaskCancellationHandler {
            try await run.recognize(request, with: recognizer)
        } onCancel: {
            run.cancel()
        }
        return ParleyCore.Transcription(
            text: text.trimmingCharacters(in: .whitespacesAndNewlines),
            audioDuration: Double(samples.count) / Double(sampleRate), processingDuration: Date().timeIntervalSince(started)
        )
    }

    static let provider = "sfspeech"
}

/// One recognition task, resumed exactly once.
final class RecognitionRun: @unchecked Sendable {
    // @unchecked Sendable: `continuation`, `recognizer`, `task` and `cancelled` are guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<String, any Error>?
    /// Kept alive until the task ends.
    private var recognizer: SFSpeechRecognizer?
    private var task: SFSpeechRecognitionTask?
    private var cancelled = false

    /// The error code the recognizer reports for audio without speech.
    private static let noSpeechDetected = 1110

    func recognize(_ request: SFSpeechAudioBufferRecognitionRequest, with recognizer: SFSpeechRecognizer) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            let alreadyCancelled = lock.withLock { () -> Bool in
                self.continuation = continuation
                self.recognizer = recognizer
                return cancelled
            }
            if alreadyCancelled {
                finish(.failure(CancellationError()))
                return
            }
            let task = recognizer.recognitionTask(with: request) { [self] result, error in
                if let result, result.isFinal {
                    self.finish(.success(result.bestTranscription.formattedString))
                } else if let error {
                    if (error as NSError).code == Self.noSpeechDetected {
                        self.finish(.success(""))
                    } else {
                        self.finish(.failure(ProviderError(
                            .server, provider: SFSpeechBufferRecognizer.provider, message: "Speech recognition failed: \(error.localizedDescription)"
                        )))
                    }
                }
            }
            lock.withLock { self.task = task }
        }
    }

    func cancel() {
        let task = lock.withLock { () -> SFSpeechRecognitionTask? in
            cancelled = true
            return self.task
        }
        task?.cancel()
        finish(.failure(CancellationError()))
    }

    private func finish(_ result: Result<String, any Error>) {
        let continuation = lock.withLock { () -> CheckedContinuation<String, any Error>? in
            defer {
                self.continuation = nil
                self.recognizer = nil
            }
            return self.continuation
        }
        continuation?.resume(with: result)
    }
}
#endif
