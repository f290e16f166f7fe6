@testable import ParleyLocal
import Testing

/// How sure Whisper was of each word: its lowest token, punctuation after it left out.
@Suite struct WhisperTokenPieceTests {
    private func pieces(_ tokens: [(String, Float)]) -> [WhisperTokenPiece] {
        tokens.map { WhisperTokenPiece(text: $0.0, probability: $0.1) }
    }

    @Test func aWordIsItsTokensFromItsStart() {
        // " crown" "s" "?": the word is "crowns", as sure as its least sure token.
        #expect(WhisperTokenPiece.wordConfidences(of: pieces([(" How", 0.9), (" many", 0.99), (" crown", 0.25), ("s", 0.8), ("?", 0.9)])) == [0.9, 0.99, 0.25])
        #expect(WhisperTokenPiece.wordConfidences(of: pieces([(" Could", 0.4), (" you", 0.96), (" check", 0.98), (" him", 0.33), ("?", 0.92)])).last == 0.33)
        #expect(WhisperTokenPiece.wordConfidences(of: pieces([(" set", 0.5), (" an", 0.7), (" alarm", 0.99), (" for", 0.89), ("...", 0.3)])).last == 0.89)
        // A hum spelled in pieces is one word.
        #expect(WhisperTokenPiece.wordConfidences(of: pieces([(" M", 0.44), ("m", 0.45), ("-", 0.89), ("hm", 0.76), (".", 0.69)])) == [0.44])
        // A transcript of one word without a leading space.
        #expect(WhisperTokenPiece.wordConfidences(of: pieces([("Yes", 0.7), (".", 0.5)])) == [0.7])
    }

    @Test func punctuationIsNoWord() {
        #expect(WhisperTokenPiece.wordConfidences(of: []).isEmpty)
        #expect(WhisperTokenPiece.wordConfidences(of: pieces([(" ...", 0.4)])).isEmpty)
        #expect(WhisperTokenPiece.wordConfidences(of: pieces([(" Stop", 0.72), (".", 0.97), (" ...", 0.1), (" no", 0.6)])) == [0.72, 0.6])
    }
}
