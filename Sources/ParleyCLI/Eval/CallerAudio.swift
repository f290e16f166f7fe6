import Foundation
import ParleyCore
import ParleyLocal
import ParleyServer

/// The simulated caller's speech: words spoken by an embedded voice, or a WAV file, as mono
/// PCM16 at the realtime protocol's 24 kHz. Clips are made once per run and reused by repeats.
actor CallerAudio {
    private let context: CommandContext
    private var synthesizers: [CallerVoice?: any SpeechSynthesizer] = [:]
    private var clips: [String: [Int16]] = [:]

    /// The protocol's rate.
    static let sampleRate = RealtimeSessionSettings.supportedAudioRate

    /// A caller whose default voice is the one `context`'s `PARLEY_*` settings choose.
    init(context: CommandContext) {
        self.context = context
    }

    /// `fragments` spoken by `voice`, `pauseMs` of silence between them.
    /// - Throws: `CommandFailure` when the voice cannot be loaded or says nothing.
    func speech(_ fragments: [String], voice: CallerVoice?, pauseMs: Int) async throws -> [Int16] {
        let key = "\(voice?.rawValue ?? "default")|\(pauseMs)|\(fragments.joined(separator: "\u{1F}"))"
        if let clip = clips[key] { return clip }
        let synthesizer = try synthesizer(voice)
        var clip: [Int16] = []
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { clip += Array(repeating: 0, count: pauseMs * Self.sampleRate / 1000) }
            var samples: [Int16] = []
            do {
                for try await chunk in synthesizer.synthesize(fragment, options: SpeechOptions()) { samples += chunk }
            } catch {
                throw CommandFailure("the caller's voice could not say \(JSONValue.string(fragment).jsonText): \(error)")
            }
            guard !samples.isEmpty else { throw CommandFailure("the caller's voice said nothing for \(JSONValue.string(fragment).jsonText)") }
            clip += Self.resampled(SampleConversion.float(samples), from: synthesizer.sampleRate)
        }
        clips[key] = clip
        return clip
    }

    /// The speech in the WAV file at `path`, relative to `directory`.
    /// - Throws: `CommandFailure` naming the file and what is wrong with it.
    func recording(_ path: String, relativeTo directory: URL) throws -> [Int16] {
        let resolved = path.hasPrefix("/") ? path : directory.appendingPathComponent(path).path
        if let clip = clips["wav|" + resolved] { return clip }
        let audio = try AudioFiles.readMono(resolved, context: context)
        let clip = Self.resampled(audio.samples, from: audio.sampleRate)
        clips["wav|" + resolved] = clip
        return clip
    }

    private static func resampled(_ samples: [Float], from rate: Int) -> [Int16] {
        SampleConversion.pcm16(AudioFiles.resample(samples, from: rate, to: sampleRate))
    }

    private func synthesizer(_ voice: CallerVoice?) throws -> any SpeechSynthesizer {
        if let loaded = synthesizers[voice] { return loaded }
        let made: any SpeechSynthesizer
        do {
            switch voice {
            case nil: made = try InProcessEngines(context).synthesizer()
            case .flite: made = try FliteSpeechSynthesizer()
            case .espeakNG: made = try EspeakSpeechSynthesizer()
            case .piper:
                var settings = try InProcessEngines(context).settings
                settings.speechSynthesis = .embedded
                settings.embeddedVoice = .piper
                let context = context
                made = try ProviderFactory.synthesizer(settings, warn: { context.warn("caller voice: \($0)") }).synthesizer
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("the caller's voice \(voice?.rawValue ?? "") cannot load: \(error)")
        }
        synthesizers[voice] = made
        return made
    }
}
