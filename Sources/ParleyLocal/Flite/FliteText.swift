import Foundation

/// Prepares text for flite: plain ASCII, split into sentences of bounded length.
enum FliteText {
    /// The longest piece handed to flite at once; longer sentences are split at a comma or a
    /// space so that memory and time to first audio stay bounded.
    static let maximumPieceLength = 300

    /// The sentences of `text`, in order, each non-empty and at most `maximumPieceLength`
    /// characters. Accents are removed (`café` → `cafe`), other non-ASCII characters and
    /// control characters become spaces.
    static func sentences(of text: String) -> [String] {
        var pieces: [String] = []
        var current = ""
        for character in asciiText(text) {
            current.append(character)
            let endsSentence = ".!?;\n".contains(character)
            if endsSentence || current.count >= maximumPieceLength {
                let (head, tail) = endsSentence ? (current, "") : splitAtLastBreak(current)
                appendPiece(head, to: &pieces)
                current = tail
            }
        }
        appendPiece(current, to: &pieces)
        return pieces
    }

    private static func asciiText(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars {
            switch scalar.value {
            case 0x0A: result.append(scalar)
            case 0x20...0x7E: result.append(scalar)
            case 0x300...0x36F: continue  // combining accents left over from decomposition
            default: result.append(" ")
            }
        }
        return String(result)
    }

    /// Splits an over-long piece after its last comma, or else its last space.
    private static func splitAtLastBreak(_ piece: String) -> (String, String) {
        guard let index = piece.lastIndex(of: ",") ?? piece.lastIndex(of: " ") else { return (piece, "") }
        let end = piece.index(after: index)
        return (String(piece[..<end]), String(piece[end...]))
    }

    private static func appendPiece(_ piece: String, to pieces: inout [String]) {
        let trimmed = piece.replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
        if trimmed.contains(where: { $0.isLetter || $0.isNumber }) {
            pieces.append(trimmed)
        }
    }
}
