import Foundation

/// Reads an `input_audio_buffer.append` message — fifty a second per session, by far the
/// most frequent event — without building a JSON tree: one pass over the bytes finds the
/// `audio` string.
///
/// Only the flat shape clients send is taken: one object whose members are `type` (exactly
/// `input_audio_buffer.append`), `audio` and optionally `event_id`, each a string without
/// escapes. Anything else — other members, escapes, nesting, broken JSON — returns `nil`, and
/// the message goes through `RealtimeClientEvent.decode`, which reports every error precisely.
enum AppendEventScanner {
    /// The audio (base64 text) and event id of a flat append message; `nil` otherwise.
    static func scan(_ text: String) -> (audio: String, eventID: String?)? {
        var text = text
        return text.withUTF8 { bytes in
            var scanner = Scanner(bytes: bytes)
            return scanner.scanAppend()
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        private static let quote = UInt8(ascii: "\"")
        private static let backslash = UInt8(ascii: "\\")
        private static let appendType = Array("input_audio_buffer.append".utf8)

        mutating func scanAppend() -> (audio: String, eventID: String?)? {
            guard accept(UInt8(ascii: "{")) else { return nil }
            var sawType = false
            var audio: Range<Int>?
            var eventID: Range<Int>?
            while true {
                guard let key = string(), accept(UInt8(ascii: ":")), let value = string() else { return nil }
                switch name(key) {
                case "type":
                    guard !sawType, bytes[value].elementsEqual(Self.appendType) else { return nil }
                    sawType = true
                case "audio":
                    guard audio == nil else { return nil }
                    audio = value
                case "event_id":
                    guard eventID == nil else { return nil }
                    eventID = value
                default:
                    return nil
                }
                if accept(UInt8(ascii: ",")) { continue }
                guard accept(UInt8(ascii: "}")) else { return nil }
                break
            }
            skipWhitespace()
            guard index == bytes.count, sawType, let audio else { return nil }
            return (text(audio), eventID.map(text))
        }

        /// The bytes of a string without escapes or control characters, after whitespace.
        private mutating func string() -> Range<Int>? {
            guard accept(Self.quote) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == Self.quote {
                    index += 1
                    return start..<index - 1
                }
                guard byte != Self.backslash, byte >= 0x20 else { return nil }
                index += 1
            }
            return nil
        }

        private func name(_ range: Range<Int>) -> String? {
            range.count <= 8 ? text(range) : nil
        }

        private func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }

        /// Skips whitespace, then takes `byte` if it comes next.
        private mutating func accept(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }
    }
}
