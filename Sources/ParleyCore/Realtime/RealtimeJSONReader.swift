import Foundation

/// Typed access to the members of one JSON object, with errors that name the field by its
/// dotted path. Absent members and `null` both read as `nil` unless the caller asks for the
/// difference with `member(_:)`; members the reader is never asked about are ignored.
struct RealtimeJSONReader {
    /// The members of the object.
    let members: [String: JSONValue]
    /// The object's own path, empty for the top level.
    let path: String

    /// A reader of `value`, which must be an object.
    init(_ value: JSONValue, path: String) throws(RealtimeProtocolError) {
        guard case .object(let members) = value else {
            throw .invalidValue(path, "expected an object, got \(value.kindName).")
        }
        self.members = members
        self.path = path
    }

    /// The path of member `key`.
    func path(of key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The raw member: `nil` when absent, `.null` when explicitly null.
    func member(_ key: String) -> JSONValue? {
        members[key]
    }

    /// Whether `key` is present (even as `null`).
    func contains(_ key: String) -> Bool {
        members[key] != nil
    }

    /// A string member, `nil` when absent or null.
    func string(_ key: String) throws(RealtimeProtocolError) -> String? {
        switch members[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw .invalidValue(path(of: key), "expected a string, got \(other.kindName).")
        }
    }

    /// A string member that must be present.
    func requiredString(_ key: String) throws(RealtimeProtocolError) -> String {
        guard let value = try string(key) else { throw .missing(path(of: key)) }
        return value
    }

    /// A boolean member, `nil` when absent or null.
    func bool(_ key: String) throws(RealtimeProtocolError) -> Bool? {
        switch members[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw .invalidValue(path(of: key), "expected a boolean, got \(other.kindName).")
        }
    }

    /// A finite number member, `nil` when absent or null.
    func double(_ key: String) throws(RealtimeProtocolError) -> Double? {
        switch members[key] {
        case nil, .null?: return nil
        case .number(let value)? where value.isFinite: return value
        case .number?: throw .invalidValue(path(of: key), "the number is out of range.")
        case let other?: throw .invalidValue(path(of: key), "expected a number, got \(other.kindName).")
        }
    }

    /// A whole-number member within `range`, `nil` when absent or null.
    func int(_ key: String, in range: ClosedRange<Int> = 0...Int(Int32.max)) throws(RealtimeProtocolError) -> Int? {
        guard let value = try double(key) else { return nil }
        guard let whole = Int(exactly: value) else {
            throw .invalidValue(path(of: key), "expected an integer, got \(value).")
        }
        guard range.contains(whole) else {
            throw .invalidValue(path(of: key), "\(whole) is outside \(range.lowerBound)…\(range.upperBound).")
        }
        return whole
    }

    /// A whole-number member within `range` that must be present.
    func requiredInt(_ key: String, in range: ClosedRange<Int> = 0...Int(Int32.max)) throws(RealtimeProtocolError) -> Int {
        guard let value = try int(key, in: range) else { throw .missing(path(of: key)) }
        return value
    }

    /// An object member as a reader, `nil` when absent or null.
    func object(_ key: String) throws(RealtimeProtocolError) -> RealtimeJSONReader? {
        switch members[key] {
        case nil, .null?: return nil
        case let value?: return try RealtimeJSONReader(value, path: path(of: key))
        }
    }

    /// An object member that must be present.
    func requiredObject(_ key: String) throws(RealtimeProtocolError) -> RealtimeJSONReader {
        guard let reader = try object(key) else { throw .missing(path(of: key)) }
        return reader
    }

    /// An array member, `nil` when absent or null.
    func array(_ key: String) throws(RealtimeProtocolError) -> [JSONValue]? {
        switch members[key] {
        case nil, .null?: return nil
        case .array(let elements)?: return elements
        case let other?: throw .invalidValue(path(of: key), "expected an array, got \(other.kindName).")
        }
    }

    /// Each element of an array member read as an object, with paths `key[i]`.
    func objects(_ key: String) throws(RealtimeProtocolError) -> [RealtimeJSONReader]? {
        guard let elements = try array(key) else { return nil }
        var readers: [RealtimeJSONReader] = []
        readers.reserveCapacity(elements.count)
        for (offset, element) in elements.enumerated() {
            readers.append(try RealtimeJSONReader(element, path: "\(path(of: key))[\(offset)]"))
        }
        return readers
    }

    /// An array of strings, `nil` when absent or null.
    func strings(_ key: String) throws(RealtimeProtocolError) -> [String]? {
        guard let elements = try array(key) else { return nil }
        var strings: [String] = []
        for (offset, element) in elements.enumerated() {
            guard case .string(let value) = element else {
                throw .invalidValue("\(path(of: key))[\(offset)]", "expected a string, got \(element.kindName).")
            }
            strings.append(value)
        }
        return strings
    }

    /// An object of string values (`metadata`), `nil` when absent or null.
    func stringMap(_ key: String) throws(RealtimeProtocolError) -> [String: String]? {
        guard let reader = try object(key) else { return nil }
        var map: [String: String] = [:]
        for (name, value) in reader.members {
            guard case .string(let text) = value else {
                throw .invalidValue(
                    reader.path(of: name.utf8.count <= 64 ? name : String(name.prefix(64)) + "…"),
                    "expected a string, got \(value.kindName)."
                )
            }
            map[name] = text
        }
        return map
    }
}

extension JSONValue {
    /// The JSON kind, for error messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
