import Foundation

/// A single `Range: bytes=…` request header resolved against a resource's length (RFC 9110 §14).
enum ByteRange {
    /// What to send for a `Range` header.
    enum Resolution: Equatable {
        /// The whole resource (no header, or one this server ignores, such as several ranges).
        case whole
        /// These bytes, with 206.
        case partial(Range<Int>)
        /// No byte of the resource is in the range: 416.
        case unsatisfiable
    }

    /// Resolves `header` for a resource of `length` bytes.
    static func resolve(_ header: String?, length: Int) -> Resolution {
        guard let header = header?.trimmingCharacters(in: .whitespaces), header.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            // The last `n` bytes.
            guard let suffix = Int(last), suffix >= 0 else { return .whole }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .partial(max(0, length - suffix)..<length)
        }
        guard let start = Int(first), start >= 0 else { return .whole }
        let end: Int
        if last.isEmpty {
            end = length - 1
        } else {
            guard let value = Int(last), value >= start else { return .whole }
            end = min(value, length - 1)
        }
        guard start < length else { return .unsatisfiable }
        return .partial(start..<(end + 1))
    }
}
