import Foundation

/// Word error rate: word-level edit distance (substitutions + deletions + insertions) divided
/// by the number of reference words, after lower-casing and dropping punctuation.
public func wordErrorRate(reference: String, hypothesis: String) -> Double {
    let expected = normalizedWords(reference)
    let heard = normalizedWords(hypothesis)
    guard !expected.isEmpty else { return heard.isEmpty ? 0 : 1 }
    return Double(editDistance(expected, heard)) / Double(expected.count)
}

/// The number of word edits needed to turn `reference` into `hypothesis`, summed over pairs.
public func totalWordErrors(_ pairs: [(reference: String, hypothesis: String)]) -> (errors: Int, words: Int) {
    pairs.reduce(into: (0, 0)) { total, pair in
        let expected = normalizedWords(pair.reference)
        total.0 += editDistance(expected, normalizedWords(pair.hypothesis))
        total.1 += expected.count
    }
}

/// The words of `text`, lower-cased, punctuation dropped (apostrophes kept).
public func normalizedWords(_ text: String) -> [String] {
    let kept = text.lowercased().map { (character: Character) -> Character in
        character.isLetter || character.isNumber || character == "'" ? character : " "
    }
    return String(kept).split(separator: " ").map(String.init)
}

private func editDistance(_ a: [String], _ b: [String]) -> Int {
    guard !a.isEmpty else { return b.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 0..<b.count {
            let substitution = previous[j] + (a[i - 1] == b[j] ? 0 : 1)
            current[j + 1] = min(substitution, previous[j + 1] + 1, current[j] + 1)
        }
        previous = current
    }
    return previous[b.count]
}
