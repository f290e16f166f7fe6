import CWhisper

/// The languages Whisper knows, from whisper.cpp's own table.
public enum WhisperLanguages {
    /// Every ISO-639-1 code whisper.cpp knows (`en`, `de`, `fr`, … 97 of them; its three-letter
    /// `haw` and `yue` are not ISO-639-1 and are left out).
    public static let codes: Set<String> = Set((0...whisper_lang_max_id()).compactMap { id in
        whisper_lang_str(id).map { String(cString: $0) }.flatMap { $0.count == 2 ? $0 : nil }
    })
}
