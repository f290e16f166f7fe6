import Foundation
import ParleyCore

/// One JSON object of a scenario file read field by field: each read names the field's path
/// when the value has the wrong type, and `finish()` refuses the members nobody read.
struct ScenarioFieldReader {
    /// The object's path in the file.
    let path: String
    private let members: [String: JSONValue]
    private var read: Set<String> = []

    /// Reads `value` at `path`.
    /// - Throws: `ScenarioFieldError` when the value is not an object.
    init(_ value: JSONValue, at path: String) throws(ScenarioFieldError) {
        guard case .object(let members) = value else { throw ScenarioFieldError(field: path, message: "expected an object") }
        self.path = path
        self.members = members
    }

    /// Whether the object has `key`.
    func has(_ key: String) -> Bool { members[key] != nil }

    /// The path of member `key`.
    func field(_ key: String) -> String { JSONSourceMap.member(key, of: path) }

    /// The member `key`, marked as read.
    mutating func value(_ key: String) -> JSONValue? {
        read.insert(key)
        return members[key]
    }

    /// A string member; an empty one is refused.
    mutating func string(_ key: String) throws(ScenarioFieldError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw ScenarioFieldError(field: field(key), message: "expected a string") }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ScenarioFieldError(field: field(key), message: "expected a string that is not empty")
        }
        return text
    }

    /// A required string member.
    mutating func requiredString(_ key: String) throws(ScenarioFieldError) -> String {
        guard let text = try string(key) else { throw ScenarioFieldError(field: field(key), message: "missing (expected a string)") }
        return text
    }

    /// A required member holding keys of a phone's keypad (`PhoneKeypad.keys`), at most `maximumCount`.
    mutating func phoneKeys(_ key: String, maximumCount: Int) throws(ScenarioFieldError) -> String {
        let expected = "expected 1 to \(maximumCount) keys of a phone's keypad (\(PhoneKeypad.keysDescription))"
        guard case .string(let keys)? = value(key), (1...maximumCount).contains(keys.count) else {
            throw ScenarioFieldError(field: field(key), message: expected)
        }
        if let other = keys.first(where: { !PhoneKeypad.keys.contains($0) }) {
            throw ScenarioFieldError(field: field(key), message: "\(JSONValue.string(String(other)).jsonText) is not a key: \(expected)")
        }
        return keys
    }

    /// A whole-number member within `range`.
    mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(ScenarioFieldError) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value, number.rounded() == number, let whole = Int(exactly: number), range.contains(whole) else {
            throw ScenarioFieldError(field: field(key), message: "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return whole
    }

    /// A number member within `range`.
    mutating func number(_ key: String, in range: ClosedRange<Double>) throws(ScenarioFieldError) -> Double? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value, range.contains(number) else {
            throw ScenarioFieldError(field: field(key), message: "expected a number from \(String(format: "%g", range.lowerBound)) to \(String(format: "%g", range.upperBound))")
        }
        return number
    }

    /// A boolean member.
    mutating func bool(_ key: String) throws(ScenarioFieldError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw ScenarioFieldError(field: field(key), message: "expected true or false") }
        return flag
    }

    /// An array member, with each element's path.
    mutating func array(_ key: String) throws(ScenarioFieldError) -> [(value: JSONValue, path: String)]? {
        guard let value = value(key) else { return nil }
        guard case .array(let elements) = value else { throw ScenarioFieldError(field: field(key), message: "expected a list") }
        return elements.enumerated().map { ($1, JSONSourceMap.element($0, of: field(key))) }
    }

    /// Refuses the members that were not read.
    func finish() throws(ScenarioFieldError) {
        if let unknown = members.keys.filter({ !read.contains($0) }).sorted().first {
            throw ScenarioFieldError(field: field(unknown), message: "unknown field")
        }
    }
}
