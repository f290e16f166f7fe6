@testable import ParleyLocal
import Testing

/// How sure Whisper was of a transcript's last word: its lowest token, punctuation after it left out.
@Suite struct WhisperTokenPieceTests {
    private func pieces(_ tokens: [(String, Float)]) -> [WhisperTokenPiece] {
        tokens.map { WhisperTokenPiece(text: $0.0, probability: $0.1) }
    }

    @Test func theLastWordIsItsTokensFromTheLastWordStart() {
        // " crown" "s" "?": the word is "crowns", as sure as its least sure token.
        #expect(WhisperTokenPiece.lastWordConfidence(of: pieces([(" How", 0.9), (" many", 0.99), (" crown", 0.25), ("s", 0.8), ("?", 0.9)])) == 0.25)
        #expect(WhisperTokenPiece.lastWordConfidence(of: pieces([(" Could", 0.4), (" you", 0.96), (" check", 0.98), (" him", 0.33), ("?", 0.92)])) == 0.33)
        #expect(WhisperTokenPiece.lastWordConfidence(of: pieces([(" set", 0.5), (" an", 0.7), (" alarm", 0.99), (" for", 0.89), ("...", 0.3)])) == 0.89)
        // A transcript of one word without a leading space.
        #expect(WhisperTokenPiece.lastWordConfidence(of: pieces([("Yes", 0.7), (".", 0.5)])) == 0.7)
    }

    @Test func noWordNoConfidence() {
        #expect(WhisperTokenPiece.lastWordConfidence(of: []) == nil)
        #expect(WhisperTokenPiece.lastWordConfidence(of: pieces([(" ...", 0.4)])) == nil)
    }
}
