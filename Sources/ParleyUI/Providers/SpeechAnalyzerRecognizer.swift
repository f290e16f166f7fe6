#if canImport(SwiftUI)
import AVFoundation
import Foundation
import ParleyCore
import Speech

/// On-device speech-to-text with `SpeechAnalyzer` and `SpeechTranscriber` (iOS 26, macOS 26):
/// a `SpeechRecognizer` for a session that runs on the device.
///
/// The model is a system asset: `prepare()` reserves the locale and installs it. Reservation
/// gates use, not just download (without it transcription runs and returns nothing), and
/// `AssetInventory.reserve` answers `false` when the locale is already reserved, so the
/// reserved locales are checked rather than the answer trusted.
@available(iOS 26.0, macOS 26.0, *)
public struct SpeechAnalyzerRecognizer: ParleyCore.SpeechRecognizer {
    public let sampleRate = 16_000
    public let supportsPartials = false
    /// The language spoken.
    public var locale: Locale

    /// Creates a recognizer for `locale`.
    public init(locale: Locale = .current) {
        self.locale = locale
    }

    /// Whether the device can transcribe on device at all.
    public static var isAvailable: Bool { SpeechTranscriber.isAvailable }

    /// Reserves the locale and installs its model if needed (downloads the first time).
    /// - Returns: the supported locale used.
    /// - Throws: `ProviderError` when the locale is not supported or the assets cannot be had.
    @discardableResult
    public func prepare() async throws -> Locale {
        guard let supported = await SpeechTranscriber.supportedLocale(equivalentTo: locale) else {
            throw ProviderError(.invalidRequest, provider: Self.provider, message: "On-device transcription does not support \(locale.identifier).")
        }
        do {
            let reserved = await AssetInventory.reservedLocales
            if !reserved.contains(where: { $0.identifier(.bcp47) == supported.identifier(.bcp47) }) {
                try await AssetInventory.reserve(locale: supported)
            }
            if let installation = try await AssetInventory.assetInstallationRequest(supporting: [Self.transcriber(for: supported)]) {
                try await installation.downloadAndInstall()
            }
        } catch {
            throw ProviderError(.connectivity, provider: Self.provider, message: "The speech model for \(supported.identifier) could not be installed: \(error.localizedDescription)")
        }
        return supported
    }

    public func transcribe(_ samples: [Float], isFinal: Bool) async throws -> ParleyCore.Transcription {
        let started = Date()
        let supported = try await prepare()
        let transcriber = Self.transcriber(for: supported)
        guard let format = await SpeechAnalyzer.bestAvailableAudioFormat(compatibleWith: [transcriber]) else {
            throw ProviderError(.connectivity, provider: Self.provider, message: "The speech model is not installed yet.")
        }
        guard let source = PCMConverter.buffer(samples, sampleRate: Double(sampleRate)),
              let converter = PCMConverter(from: source.format, to: format) else {
            throw ProviderError(.invalidRequest, provider: Self.provider, message: "The audio could not be converted for the speech model.")
        }
        let converted = try converter.convert(source)
        let (inputs, feed) = AsyncStream.makeStream(of: AnalyzerInput.self)
        feed.yield(AnalyzerInput(buffer: converted))
        feed.finish()

        let analyzer = SpeechAnalyzer(modules: [transcriber])
        async let finalText: String = transcriber.results.reduce(into: "") { text, result in
            if result.isFinal { text += String(result.text.characters) }
        }
        do {
            if let lastSample = try await analyzer.analyzeSequence(inputs) {
                try await analyzer.finalizeAndFinish(through: lastSample)
            } else {
                await analyzer.cancelAndFinishNow()
            }
            let text = try await finalText
            return ParleyCore.Transcription(
                text: text.trimmingCharacters(in: .whitespacesAndNewlines),
                audioDuration: Double(samples.count) / Double(sampleRate), processingDuration: Date().timeIntervalSince(started)
            )
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ProviderError(.server, provider: Self.provider, message: "Speech recognition failed: \(error.localizedDescription)")
        }
    }

    private static func transcriber(for locale: Locale) -> SpeechTranscriber {
        SpeechTranscriber(locale: locale, transcriptionOptions: [], reportingOptions: [], attributeOptions: [])
    }

    static let provider = "speechanalyzer"
}

/// The best on-device speech recognizer this system has.
public enum OnDeviceSpeechRecognition {
    /// `SpeechAnalyzerRecognizer` on iOS 26 and macOS 26 when the device supports it,
    /// otherwise `SFSpeechBufferRecognizer`.
    public static func recognizer(locale: Locale = .current) -> any ParleyCore.SpeechRecognizer {
        if #available(iOS 26.0, macOS 26.0, *), SpeechAnalyzerRecognizer.isAvailable {
            return SpeechAnalyzerRecognizer(locale: locale)
        }
        return SFSpeechBufferRecognizer(locale: locale)
    }
}
#endif
