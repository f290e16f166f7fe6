import Foundation

/// Makes the ids of items, responses and sessions: a prefix and 20 random letters and digits.
public enum IdentifierGenerator {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// A new id such as `item_Ab3…`.
    public static func make(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return prefix + "_" + String((0..<20).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
