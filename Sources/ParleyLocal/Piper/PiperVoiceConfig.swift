import Foundation
import ParleyCore

/// The JSON file beside a Piper voice (`VOICE.onnx.json`): its sample rate, espeak-ng voice,
/// inference scales and the map from phonemes to the network's input ids.
struct PiperVoiceConfig: Sendable, Hashable {
    /// The rate of the audio the network makes.
    var sampleRate: Int
    /// The espeak-ng voice that phonemises its text (for example `en-us`).
    var espeakVoice: String
    /// How much noise the network adds to the speech (expressiveness).
    var noiseScale: Float
    /// How long phonemes last: 1 is the voice's own pace, larger is slower.
    var lengthScale: Float
    /// How much the phoneme durations vary.
    var noiseWidth: Float
    /// Each phoneme (one Unicode scalar) and its ids.
    var phonemeIDs: [Unicode.Scalar: [Int64]]

    /// Piper's marks: utterance start, padding after every phoneme, utterance end.
    static let start: Unicode.Scalar = "^", pad: Unicode.Scalar = "_", end: Unicode.Scalar = "$"

    private struct File: Decodable {
        struct Audio: Decodable { var sample_rate: Int }
        struct Espeak: Decodable { var voice: String }
        struct Inference: Decodable {
            var noise_scale: Float?
            var length_scale: Float?
            var noise_w: Float?
        }

        var audio: Audio
        var espeak: Espeak
        var inference: Inference?
        var phoneme_id_map: [String: [Int64]]
    }

    /// Reads the config at `path`.
    /// - Throws: `LocalModelError` when it is missing or not a Piper voice config.
    init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocalModelError.missingFile(kind: "Piper voice config", path: path)
        }
        guard let file = try? JSONDecoder().decode(File.self, from: data), (8_000...48_000).contains(file.audio.sample_rate) else {
            throw LocalModelError.unloadable(kind: "Piper voice config", path: path)
        }
        var ids: [Unicode.Scalar: [Int64]] = [:]
        for (phoneme, phonemeIDs) in file.phoneme_id_map {
            let scalars = phoneme.unicodeScalars
            if scalars.count == 1, let scalar = scalars.first { ids[scalar] = phonemeIDs }
        }
        guard ids[Self.start] != nil, ids[Self.pad] != nil, ids[Self.end] != nil else {
            throw LocalModelError.unloadable(kind: "Piper voice config (no ^ _ $ ids)", path: path)
        }
        sampleRate = file.audio.sample_rate
        espeakVoice = file.espeak.voice
        noiseScale = file.inference?.noise_scale ?? 0.667
        lengthScale = file.inference?.length_scale ?? 1
        noiseWidth = file.inference?.noise_w ?? 0.8
        phonemeIDs = ids
    }

    /// The network's input for `phonemes` (IPA, as espeak-ng writes it): the start id, each
    /// known phoneme's ids followed by the padding id, the end id. Phonemes the voice does not
    /// know are skipped; accents are decomposed first (as Piper does).
    func ids(of phonemes: String) -> [Int64] {
        var ids = phonemeIDs[Self.start]! + phonemeIDs[Self.pad]!
        for scalar in phonemes.decomposedStringWithCanonicalMapping.unicodeScalars {
            guard let phonemeIDs = phonemeIDs[scalar] else { continue }
            ids += phonemeIDs
            ids += self.phonemeIDs[Self.pad]!
        }
        return ids + phonemeIDs[Self.end]!
    }
}
