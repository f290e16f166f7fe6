import Foundation

/// An agent's phone settings: the numbers that reach it and what the caller's key presses do.
public struct AgentTelephonySettings: Codable, Sendable, Hashable {
    /// Called numbers (E.164, such as `+14155550123`) that Twilio calls reach this agent on.
    public var phoneNumbers: [String]?
    /// Whether a key press also becomes a user message ("The caller pressed 3.") that the
    /// agent answers; off by default (key presses are always logged as events).
    public var keyPressMessages: Bool?

    /// Creates settings.
    public init(phoneNumbers: [String]? = nil, keyPressMessages: Bool? = nil) {
        self.phoneNumbers = phoneNumbers
        self.keyPressMessages = keyPressMessages
    }

    enum CodingKeys: String, CodingKey {
        case phoneNumbers = "phone_numbers", keyPressMessages = "key_press_messages"
    }

    /// Problems that make the settings unusable, one line each.
    func validationProblems() -> [String] {
        (phoneNumbers ?? []).enumerated().compactMap { index, number in
            Self.isE164(number) ? nil : "telephony.phone_numbers[\(index)]: \"\(number)\" is not an E.164 number such as +14155550123"
        }
    }

    /// Whether `number` is `+` and 8 to 15 digits, the first not 0.
    static func isE164(_ number: String) -> Bool {
        let digits = number.utf8.dropFirst()
        return number.first == "+" && (8...15).contains(digits.count) && digits.first != UInt8(ascii: "0")
            && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
