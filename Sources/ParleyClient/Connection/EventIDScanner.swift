import Foundation

/// Reads the `event_id` of a server event without parsing the whole message: servers write
/// it next to `type` at the start, and an audio event can be hundreds of kilobytes.
enum EventIDScanner {
    /// How far into the message the id is looked for.
    static let window = 256

    /// The `event_id` string near the start of `text`, or `nil` when it is not found there
    /// (or holds escapes, which real ids never do).
    static func eventID(in text: String) -> String? {
        let head = Array(text.utf8.prefix(window))
        let key = Array(#""event_id""#.utf8)
        guard let keyStart = firstIndex(of: key, in: head) else { return nil }
        var index = keyStart + key.count
        func skipSpaces() { while index < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[index]) { index += 1 } }
        skipSpaces()
        guard index < head.count, head[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        skipSpaces()
        guard index < head.count, head[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        while index < head.count, head[index] != UInt8(ascii: "\"") {
            if head[index] == UInt8(ascii: "\\") { return nil }
            index += 1
        }
        guard index < head.count, index > start else { return nil }
        return String(decoding: head[start..<index], as: UTF8.self)
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
