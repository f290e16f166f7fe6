import Foundation

/// Fresh identifiers in OpenAI's style: a prefix and 22 random letters and digits
/// (`event_…`, `item_…`, `resp_…`, `sess_…`, `call_…`, `conv_…`).
public enum RealtimeID {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// A new identifier `prefix_` followed by 22 random base-62 characters (about 131 bits).
    public static func make(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        var high = generator.next() as UInt64
        var low = generator.next() as UInt64
        var suffix = [UInt8](repeating: 0, count: 22)
        for offset in 0..<22 {
            let source = offset < 11 ? high : low
            suffix[offset] = alphabet[Int(source % 62)]
            if offset < 11 { high /= 62 } else { low /= 62 }
        }
        return prefix + "_" + String(decoding: suffix, as: UTF8.self)
    }

    /// A new server event id, `event_…`.
    public static func event() -> String { make("event") }
    /// A new conversation item id, `item_…`.
    public static func item() -> String { make("item") }
    /// A new response id, `resp_…`.
    public static func response() -> String { make("resp") }
    /// A new session id, `sess_…`.
    public static func session() -> String { make("sess") }
    /// A new function call id, `call_…`.
    public static func call() -> String { make("call") }
    /// A new conversation id, `conv_…`.
    public static func conversation() -> String { make("conv") }
}
