/// An ordered list of HTTP header fields; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, Equatable {
    /// The fields in the order they were added, names as given.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates headers from name–value pairs, keeping their order.
    public init(_ pairs: [(String, String)] = []) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// Creates headers from a literal such as `["Content-Type": "text/plain"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Creates headers from a literal list of pairs, such as `[]` or `[("Accept", "*/*")]`.
    public init(arrayLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The value of the first field named `name` (case-insensitive), or `nil`.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Every value of the fields named `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Whether a field named `name` (case-insensitive) is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.caseInsensitiveEquals(name) }
    }

    /// Appends a field, keeping any existing fields with the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field named `name` with one field holding `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field named `name` (case-insensitive).
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Iterates the fields as `(name, value)` pairs in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// Headers are equal when they hold the same fields in the same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

extension String {
    /// ASCII case-insensitive comparison, the rule for HTTP field names and tokens.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { asciiLowercase($0) == asciiLowercase($1) }
    }
}

private func asciiLowercase(_ byte: UInt8) -> UInt8 {
    (byte >= 0x41 && byte <= 0x5A) ? byte + 0x20 : byte
}
