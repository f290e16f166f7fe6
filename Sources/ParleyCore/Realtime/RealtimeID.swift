import Foundation

/// Fresh identifiers in OpenAI's style: a prefix and 22 letters and digits (`event_…`,
/// `item_…`, `resp_…`, `sess_…`, `call_…`, `conv_…`).
///
/// Ids must be unique, not secret (credentials are separate), so they come from a fast
/// generator seeded once from the system's random source rather than from a system call each:
/// one is made for every server event.
public enum RealtimeID {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    private static let generator = LockedRandomGenerator()

    /// A new identifier: `prefix_` followed by 22 base-62 characters (128 random bits).
    public static func make(_ prefix: String) -> String {
        let (high, low) = generator.next128()
        var suffix = [UInt8](repeating: 0, count: 22)
        var words = (high, low)
        for offset in 0..<22 {
            if offset < 11 {
                suffix[offset] = alphabet[Int(words.0 % 62)]
                words.0 /= 62
            } else {
                suffix[offset] = alphabet[Int(words.1 % 62)]
                words.1 /= 62
            }
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

/// xoshiro256** seeded from `SystemRandomNumberGenerator`, shared behind a lock.
///
/// `@unchecked Sendable`: `state` is only read and written while holding `lock`.
private final class LockedRandomGenerator: @unchecked Sendable {
    private let lock = NSLock()
    private var state: (UInt64, UInt64, UInt64, UInt64)

    init() {
        var system = SystemRandomNumberGenerator()
        state = (system.next(), system.next(), system.next(), system.next())
        if state == (0, 0, 0, 0) { state.0 = 1 }
    }

    /// The next 128 bits.
    func next128() -> (UInt64, UInt64) {
        lock.lock()
        defer { lock.unlock() }
        return (step(), step())
    }

    private func step() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}
