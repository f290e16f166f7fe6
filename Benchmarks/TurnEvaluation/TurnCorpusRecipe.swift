import Foundation

/// What a clip of the turn-taking corpus is for, and so how it is scored.
public enum TurnClipKind: String, Codable, Sendable, CaseIterable {
    /// A whole question: the turn should end soon after its last word.
    case completeQuestion = "complete question"
    /// A question with a pause mid-thought: the turn must not end inside the pause.
    case midThoughtPause = "mid-thought pause"
    /// "Mm-hmm", "yeah", "okay" while the agent speaks: must not interrupt it.
    case backchannel
    /// A cough, a knock, a door: must not interrupt the agent.
    case shortNoise = "short noise"
    /// "Wait", "stop", "no, I meant…" while the agent speaks: must interrupt it, quickly.
    case realInterruption = "real interruption"
    /// A sentence without noise, for the word error rate beside the noisy ones.
    case cleanSpeech = "clean speech"
    /// A sentence under babble or white noise, for the word error rate.
    case noisySpeech = "noisy speech"
    /// Nothing said; the agent's own voice leaks back into the microphone.
    case echoLeak = "echo leak"
}

/// A text-to-speech voice installed on the machine (Debian's `flite` and `espeak-ng` commands,
/// or Parley's embedded Piper voice).
public struct TurnVoice: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The program that speaks.
    public enum Engine: String, Codable, Sendable { case flite, espeakNG = "espeak-ng", piper }

    public var engine: Engine
    /// The voice name the program takes (`slt`, `en-us`).
    public var name: String

    public static let fliteSLT = TurnVoice(engine: .flite, name: "slt")
    public static let fliteRMS = TurnVoice(engine: .flite, name: "rms")
    public static let fliteAWB = TurnVoice(engine: .flite, name: "awb")
    /// flite's kal voice in its 16 kHz build.
    public static let fliteKAL = TurnVoice(engine: .flite, name: "kal16")
    public static let espeakUS = TurnVoice(engine: .espeakNG, name: "en-us")
    public static let espeakGB = TurnVoice(engine: .espeakNG, name: "en-gb")
    /// The neural voice Parley speaks with by default (Piper's en_US-joe-medium, run in process):
    /// natural prosody, for the labelled extra run beside the flite and espeak-ng corpus.
    public static let piperJoe = TurnVoice(engine: .piper, name: "en_US-joe-medium")

    /// The voices the corpus takes turns with.
    public static let rotation: [TurnVoice] = [.fliteSLT, .fliteRMS, .fliteAWB, .fliteKAL, .espeakUS, .espeakGB]

    public var description: String { "\(engine.rawValue) \(name)" }
}

/// A short non-speech sound, synthesised by sox.
public enum TurnSound: String, Codable, Hashable, Sendable {
    /// A burst of band-passed noise with a fast attack, like a cough.
    case cough
    /// Two short low thumps, like a knock on a table.
    case knock
    /// One loud low-passed burst, like a door closing.
    case door

    /// The `sox -n` effects that make it (16 kHz mono).
    var soxEffects: [String] {
        switch self {
        case .cough: ["synth", "0.28", "pinknoise", "band", "-n", "700", "500", "fade", "q", "0.01", "0.28", "0.2", "gain", "-n", "-8"]
        case .knock: ["synth", "0.06", "brownnoise", "fade", "q", "0.002", "0.06", "0.05", "repeat", "1", "pad", "0", "0.1", "gain", "-n", "-6"]
        case .door: ["synth", "0.35", "brownnoise", "lowpass", "300", "fade", "q", "0.005", "0.35", "0.3", "gain", "-n", "-4"]
        }
    }
}

/// Background noise mixed under a clip's speech.
public struct TurnNoise: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Sendable {
        /// Several TTS voices talking over each other.
        case babble
        /// Gaussian white noise.
        case white
    }

    public var kind: Kind
    /// Speech level over noise level (RMS of the voiced speech against RMS of the noise), in dB.
    public var snrDB: Int

    public init(kind: Kind, snrDB: Int) {
        self.kind = kind
        self.snrDB = snrDB
    }

    /// The noisy conditions of the corpus: babble and white noise at 10 and 5 dB SNR.
    public static let conditions = [TurnNoise(kind: .babble, snrDB: 10), TurnNoise(kind: .babble, snrDB: 5),
                                    TurnNoise(kind: .white, snrDB: 10), TurnNoise(kind: .white, snrDB: 5)]
}

/// How to make one clip: what is said by which voice, the pauses and sounds between, the
/// noise under it. The recipe is the clip's cache key.
public struct TurnClipRecipe: Codable, Hashable, Sendable {
    /// One piece of the clip, in order.
    public enum Segment: Codable, Hashable, Sendable {
        /// `text` spoken by `voice`, trimmed to where the voice is (-45 dBFS).
        case speech(text: String, voice: TurnVoice)
        /// Digital silence.
        case pause(milliseconds: Int)
        /// A synthesised sound.
        case sound(TurnSound)
    }

    /// A name unique in the corpus (`complete-03`).
    public var id: String
    public var kind: TurnClipKind
    public var segments: [Segment]
    /// Noise mixed under the whole clip, if any.
    public var noise: TurnNoise?
    /// For an echo leak: the level at which the agent's own output comes back, in dB.
    public var echoGainDB: Int?

    public init(id: String, kind: TurnClipKind, segments: [Segment], noise: TurnNoise? = nil, echoGainDB: Int? = nil) {
        self.id = id
        self.kind = kind
        self.segments = segments
        self.noise = noise
        self.echoGainDB = echoGainDB
    }

    /// Everything said, in order.
    public var text: String {
        segments.compactMap { if case .speech(let text, _) = $0 { text } else { nil } }.joined(separator: " ")
    }

    /// The recipe as canonical JSON (sorted keys): what the cache key hashes.
    var canonicalJSON: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data(id.utf8)
    }
}
