import Foundation
import ParleyCore

/// libFuzzer entry: streams the input text through `SentenceSegmenter` in deltas cut at
/// input-chosen points. Every chunk must be non-empty and trimmed, and the chunks together
/// must hold exactly the input's non-whitespace text, in order.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSentenceSegmenter(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let input = UnsafeBufferPointer(start: bytes, count: count)
    // The first byte picks the delta length (1…16 characters) and a small configuration.
    let control = Int(input[0])
    let text = String(decoding: input.dropFirst(), as: UTF8.self)
    let step = control % 16 + 1
    let configuration = control >= 128
        ? SentenceSegmenter.Configuration(firstClauseWords: 2, clauseWords: 3, maximumWords: 5, maximumCharacters: 20)
        : SentenceSegmenter.Configuration()
    var segmenter = SentenceSegmenter(configuration: configuration)
    var chunks: [String] = []
    var characters = Array(text)[...]
    while !characters.isEmpty {
        chunks += segmenter.append(String(characters.prefix(step)))
        characters = characters.dropFirst(step)
    }
    chunks += segmenter.flush()
    for chunk in chunks {
        fuzzCheck(!chunk.isEmpty, "an empty chunk")
        fuzzCheck(chunk == chunk.trimmingCharacters(in: .whitespacesAndNewlines), "an untrimmed chunk")
    }
    fuzzCheck(visibleScalars(chunks.joined()) == visibleScalars(text), "the chunks lost, added or reordered text")
    return 0
}

/// The text's Unicode scalars without whitespace of either definition (Character's or
/// CharacterSet's). A character that starts with whitespace counts as whitespace as a whole,
/// as it does for the segmenter: a stray combining mark after a space goes with the space.
private func visibleScalars(_ text: String) -> [Unicode.Scalar] {
    text.filter { !$0.isWhitespace }.unicodeScalars.filter {
        !$0.properties.isWhitespace && !CharacterSet.whitespacesAndNewlines.contains($0)
    }
}
