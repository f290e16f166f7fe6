import Foundation
import ParleyCore

/// The turn-taking evaluation corpus, made from text at bench or test time and cached.
///
/// Each clip is made from its `TurnClipRecipe`: the speech by the `flite` or `espeak-ng`
/// command, converted by sox to 16 kHz mono and trimmed to where the voice is; pauses as
/// digital silence; coughs, knocks and doors synthesised by sox; babble by mixing five TTS
/// talkers with sox; white noise by sox; the noise mixed under the speech by sox at the
/// recipe's signal-to-noise ratio. A clip and its ground truth are cached under
/// `cacheDirectory` in a file named by a hash of the recipe (and `generatorVersion`), so a
/// changed recipe makes a new clip and an unchanged one is read back.
///
/// ```swift
/// let corpus = try await TurnCorpus(cacheDirectory: TurnCorpus.defaultCacheDirectory)
/// let clips = try await corpus.clips(for: TurnCorpusScript.recipes(slice: 4))
/// ```
public struct TurnCorpus: Sendable {
    /// Raised when a tool is missing or fails.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Bumped when the way clips are made changes, so cached clips are made again.
    static let generatorVersion = 2

    /// `$PARLEY_CACHE/turn-corpus` (`~/.cache/parley/turn-corpus` by default).
    public static var defaultCacheDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["PARLEY_CACHE"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/parley")
        return cache.appendingPathComponent("turn-corpus")
    }

    public let cacheDirectory: URL
    private let tools: SoundTools

    /// A corpus cached in `cacheDirectory`.
    /// - Throws: `Failure` when flite, espeak-ng or sox is not installed (scripts/setup installs them).
    public init(cacheDirectory: URL) throws {
        self.cacheDirectory = cacheDirectory
        tools = try SoundTools()
        try FileManager.default.createDirectory(at: cacheDirectory, withIntermediateDirectories: true)
    }

    /// The clips of `recipes`, made or read from the cache, in the same order.
    public func clips(for recipes: [TurnClipRecipe]) async throws -> [TurnClip] {
        var clips: [TurnClip] = []
        for recipe in recipes { clips.append(try await clip(for: recipe)) }
        return clips
    }

    /// The clip of `recipe`, made or read from the cache: its audio in `ID-KEY.wav`, its
    /// ground truth in `ID-KEY.json`.
    public func clip(for recipe: TurnClipRecipe) async throws -> TurnClip {
        let name = "\(recipe.id)-\(Self.key(recipe))"
        let truthFile = cacheDirectory.appendingPathComponent("\(name).json")
        let audioFile = cacheDirectory.appendingPathComponent("\(name).wav")
        if let data = try? Data(contentsOf: truthFile), let truth = try? JSONDecoder().decode(TurnClip.GroundTruth.self, from: data),
           truth.recipe == recipe, let audio = try? Data(contentsOf: audioFile), let wav = try? WAVFile.read(audio),
           wav.samples.count == truth.sampleCount {
            return TurnClip(recipe: recipe, samples: wav.samples, voicedSpans: truth.voicedSpans, soundSpans: truth.soundSpans)
        }
        let clip = try await make(recipe)
        try Self.writeWAV(clip.samples, to: audioFile)
        // Read back as it will be from the cache (16-bit), so a cached clip and a new one are the same.
        let stored = try WAVFile.read(Data(contentsOf: audioFile)).samples
        try JSONEncoder().encode(clip.groundTruth).write(to: truthFile, options: .atomic)
        return TurnClip(recipe: recipe, samples: stored, voicedSpans: clip.voicedSpans, soundSpans: clip.soundSpans)
    }

    /// Writes `samples` (plus `leadMs` and `tailMs` of silence) as a 16 kHz WAV for another program.
    public static func writeWAV(_ samples: [Float], leadMs: Int = 0, tailMs: Int = 0, to url: URL) throws {
        let silence = { (ms: Int) in [Float](repeating: 0, count: ms * TurnClip.sampleRate / 1000) }
        let pcm = SampleConversion.pcm16(silence(leadMs) + samples + silence(tailMs))
        try WAVFile.pcm16Data(samples: pcm, format: AudioFormat(sampleRate: TurnClip.sampleRate)).write(to: url, options: .atomic)
    }

    /// The cache key: FNV-1a (64 bit) of the recipe's canonical JSON and the generator version.
    static func key(_ recipe: TurnClipRecipe) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in recipe.canonicalJSON + Data("v\(generatorVersion)".utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    private func make(_ recipe: TurnClipRecipe) async throws -> TurnClip {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("turn-corpus-\(getpid())-\(recipe.id)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var samples: [Float] = []
        var voicedSpans: [Range<Int>] = []
        var soundSpans: [Range<Int>] = []
        for (index, segment) in recipe.segments.enumerated() {
            switch segment {
            case .speech(let text, let voice):
                let speech = try await tools.speak(text, voice: voice, in: work, name: "speech-\(index)")
                voicedSpans.append(samples.count..<samples.count + speech.count)
                samples += speech
            case .pause(let milliseconds):
                samples += [Float](repeating: 0, count: milliseconds * TurnClip.sampleRate / 1000)
            case .sound(let sound):
                let burst = try await tools.synthesize(sound, in: work, name: "sound-\(index)")
                soundSpans.append(samples.count..<samples.count + burst.count)
                samples += burst
            }
        }
        if let noise = recipe.noise {
            samples = try await tools.mix(samples, voicedSpans: voicedSpans, under: noise, in: work, babble: babbleBed)
        }
        return TurnClip(recipe: recipe, samples: samples, voicedSpans: voicedSpans, soundSpans: soundSpans)
    }

    /// Five talkers over each other, made once and cached like a clip.
    private func babbleBed(_ work: URL) async throws -> URL {
        let bed = cacheDirectory.appendingPathComponent("babble-v\(Self.generatorVersion).wav")
        if FileManager.default.fileExists(atPath: bed.path) { return bed }
        var talkers: [URL] = []
        for (index, (text, voice)) in TurnCorpusScript.babbleTalkers.enumerated() {
            let speech = try await tools.speak(text, voice: voice, in: work, name: "talker-\(index)")
            // Each talker starts at a different point of its sentence, so no two pause together.
            let offset = speech.count * index / TurnCorpusScript.babbleTalkers.count
            let url = work.appendingPathComponent("talker-\(index)-rotated.wav")
            try Self.writeWAV(Array(speech[offset...] + speech[..<offset]), to: url)
            talkers.append(url)
        }
        let mixed = work.appendingPathComponent("babble.wav")
        try await tools.sox(["-m"] + talkers.map(\.path) + [mixed.path, "gain", "-n", "-3"])
        try FileManager.default.moveItem(at: mixed, to: bed)
        return bed
    }
}
