import Foundation

/// The keys a caller presses on a phone's keypad (DTMF), and what an agent is told of a press.
public enum PhoneKeypad {
    /// Every key: `0`–`9`, `*`, `#` and the rarely seen `A`–`D`.
    public static let keys: Set<Character> = Set("0123456789*#ABCD")

    /// The keys as error messages name them.
    public static let keysDescription = "0-9, *, #, A, B, C or D"

    /// Whether `text` is exactly one key of the keypad.
    public static func isKey(_ text: String) -> Bool {
        text.count == 1 && text.first.map(keys.contains) == true
    }

    /// The user message an agent that asks for key presses gets when the caller presses `key`.
    ///
    /// ```swift
    /// session.addItem(PhoneKeypad.message(forKey: "5"))  // "The caller pressed 5."
    /// ```
    public static func message(forKey key: String) -> ChatMessage {
        .user("The caller pressed \(key).")
    }
}
