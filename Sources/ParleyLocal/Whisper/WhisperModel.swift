/// The Whisper models setup installs, by the names `--asr-model` and `PARLEY_ASR_MODEL` take.
public enum WhisperModel: String, Sendable, Hashable, CaseIterable {
    /// tiny.en (39 M parameters): English only, the cheapest.
    case tinyEnglish = "tiny.en"
    /// base (74 M parameters): multilingual, fewer word errors, about 2.3× tiny.en's CPU.
    case base

    /// The model's file in the model directory.
    public var file: ModelLocator.Model {
        switch self {
        case .tinyEnglish: .whisperTinyEnglish
        case .base: .whisperBase
        }
    }
}
