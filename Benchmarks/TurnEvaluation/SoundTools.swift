import Foundation
import ParleyCore
import ParleyLocal
import ParleyTesting

/// The command-line programs the corpus is made with: `flite` and `espeak-ng` speak, `sox`
/// converts, trims, synthesises and mixes. Each call runs one process and waits for it. The
/// Piper voice speaks in process (`PiperSpeechSynthesizer`, loaded once per process).
struct SoundTools: Sendable {
    private let flite: URL
    private let espeak: URL
    private let soxProgram: URL

    /// Finds the programs on `PATH`.
    /// - Throws: `TurnCorpus.Failure` naming a missing one.
    init() throws {
        func find(_ name: String) throws -> URL {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            for directory in path.split(separator: ":") {
                let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
            throw TurnCorpus.Failure(description: "the turn corpus needs the \(name) command (Debian package \(name == "espeak-ng" ? "espeak-ng" : name); run scripts/setup)")
        }
        flite = try find("flite")
        espeak = try find("espeak-ng")
        soxProgram = try find("sox")
    }

    /// `text` spoken by `voice`, as 16 kHz mono samples trimmed to the voice (leading and
    /// trailing audio under -45 dBFS cut off by sox's `silence` effect).
    func speak(_ text: String, voice: TurnVoice, in work: URL, name: String) async throws -> [Float] {
        let raw = work.appendingPathComponent("\(name)-raw.wav")
        switch voice.engine {
        case .flite: try await run(flite, ["-voice", voice.name, "-t", text, "-o", raw.path])
        case .espeakNG: try await run(espeak, ["-v", voice.name, "-w", raw.path, text])
        case .piper: try await speakWithPiper(text, to: raw)
        }
        let trimmed = work.appendingPathComponent("\(name).wav")
        try await sox([raw.path, "-r", "16000", "-c", "1", "-b", "16", trimmed.path,
                       "silence", "1", "0.005", "-45d", "reverse", "silence", "1", "0.005", "-45d", "reverse"])
        let samples = try read(trimmed)
        guard !samples.isEmpty else { throw TurnCorpus.Failure(description: "\(voice) said nothing for \"\(text)\"") }
        return samples
    }

    /// `text` spoken by the embedded Piper voice, written to `url` at the voice's rate.
    private func speakWithPiper(_ text: String, to url: URL) async throws {
        let locator = ModelLocator()
        let piper = try PiperSpeechSynthesizer(modelPath: locator.path(of: .piperJoe), onnxRuntimePath: locator.onnxRuntimeLibraryPath())
        var samples: [Int16] = []
        for try await chunk in piper.synthesize(text, options: SpeechOptions()) { samples += chunk }
        try WAVFile.pcm16Data(samples: samples, format: AudioFormat(sampleRate: piper.sampleRate)).write(to: url, options: .atomic)
    }

    /// A synthesised sound at 16 kHz.
    func synthesize(_ sound: TurnSound, in work: URL, name: String) async throws -> [Float] {
        let url = work.appendingPathComponent("\(name).wav")
        try await sox(["-n", "-r", "16000", "-c", "1", "-b", "16", url.path] + sound.soxEffects)
        return try read(url)
    }

    /// `speech` with `noise` mixed under it by sox, the noise scaled so that the voiced spans'
    /// RMS over the noise's RMS is the recipe's SNR.
    func mix(
        _ speech: [Float], voicedSpans: [Range<Int>], under noise: TurnNoise, in work: URL, babble: (URL) async throws -> URL
    ) async throws -> [Float] {
        let seconds = String(format: "%.3f", Double(speech.count) / Double(TurnClip.sampleRate))
        let noiseURL = work.appendingPathComponent("noise.wav")
        switch noise.kind {
        case .white:
            try await sox(["-n", "-r", "16000", "-c", "1", "-b", "16", noiseURL.path, "synth", seconds, "whitenoise", "gain", "-n", "-12"])
        case .babble:
            // A stretch of the babble bed as long as the clip, looped if the clip is longer.
            try await sox([try await babble(work).path, noiseURL.path, "repeat", "3", "trim", "1.7", seconds])
        }
        let noiseSamples = try read(noiseURL)
        let voiced = voicedSpans.flatMap { speech[$0] }
        let speechLevel = LevelMeter.rms(voiced[...])
        let noiseLevel = LevelMeter.rms(noiseSamples[...])
        guard speechLevel > 0, noiseLevel > 0 else { throw TurnCorpus.Failure(description: "silent speech or noise: cannot set an SNR") }
        let noiseGain = speechLevel / noiseLevel / pow(10, Float(noise.snrDB) / 20)
        let speechURL = work.appendingPathComponent("clean.wav")
        try TurnCorpus.writeWAV(speech, to: speechURL)
        let mixed = work.appendingPathComponent("mixed.wav")
        // -m would halve both inputs: the explicit volumes keep the speech at its level.
        try await sox(["-m", "-v", "1", speechURL.path, "-v", String(format: "%.6f", noiseGain), noiseURL.path, mixed.path,
                       "trim", "0", "\(speech.count)s"])
        return try read(mixed)
    }

    /// Runs sox with `arguments`.
    func sox(_ arguments: [String]) async throws {
        try await run(soxProgram, ["-q", "-V1"] + arguments)
    }

    private func read(_ url: URL) throws -> [Float] {
        let wav = try WAVFile.read(Data(contentsOf: url))
        guard wav.format.sampleRate == TurnClip.sampleRate else {
            throw TurnCorpus.Failure(description: "\(url.lastPathComponent) is at \(wav.format.sampleRate) Hz, not 16 kHz")
        }
        return wav.buffer.mixedToMono().samples
    }

    private func run(_ program: URL, _ arguments: [String]) async throws {
        let child = Subprocess()
        child.executableURL = program
        child.arguments = arguments
        let errors = Pipe()
        child.standardError = errors
        child.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try child.run()
        let status = await child.exitStatus()
        let message = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
        guard status == 0 else {
            throw TurnCorpus.Failure(description: "\(program.lastPathComponent) \(arguments.joined(separator: " ")) failed (\(status)): \(message)")
        }
    }
}
