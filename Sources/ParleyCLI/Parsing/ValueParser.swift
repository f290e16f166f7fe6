import Foundation

/// Why an option's text is not an acceptable value.
struct ValueProblem: Error, Sendable, Hashable {
    /// What was expected, e.g. `expected a whole number from 0 to 65535`.
    var reason: String
}

/// Converts an option's text to a typed value, or says what was expected.
struct ValueParser<Value>: Sendable {
    /// The conversion.
    let parse: @Sendable (String) -> Result<Value, ValueProblem>
}

extension ValueParser where Value == Int {
    /// A whole number in `range`.
    static func integer(in range: ClosedRange<Int>) -> ValueParser<Int> {
        ValueParser { text in
            guard let number = Int(text), range.contains(number) else {
                return .failure(ValueProblem(reason: "expected a whole number from \(range.lowerBound) to \(range.upperBound)"))
            }
            return .success(number)
        }
    }

    /// A TCP port, 0 to 65535 (0 picks a free port).
    static let port = integer(in: 0...65535)
}

extension ValueParser where Value == Double {
    /// A decimal number in `range`.
    static func number(in range: ClosedRange<Double>) -> ValueParser<Double> {
        ValueParser { text in
            guard let number = Double(text), number.isFinite, range.contains(number) else {
                return .failure(ValueProblem(reason: "expected a number from \(range.lowerBound.formatted) to \(range.upperBound.formatted)"))
            }
            return .success(number)
        }
    }
}

extension ValueParser where Value == Duration {
    /// A duration such as `90s`, `10m`, `2h`, `1h30m` or `500ms`, at most `maximum`.
    static func duration(maximum: Duration) -> ValueParser<Duration> {
        ValueParser { text in
            guard let duration = DurationText.parse(text), duration > .zero else {
                return .failure(ValueProblem(reason: "expected a duration such as 90s, 10m or 2h"))
            }
            guard duration <= maximum else {
                return .failure(ValueProblem(reason: "the longest allowed is \(DurationText.format(maximum))"))
            }
            return .success(duration)
        }
    }
}

extension ValueParser where Value == URL {
    /// An `http` or `https` URL with a host (a server's base URL).
    static let serverURL = ValueParser<URL> { text in
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty
        else {
            return .failure(ValueProblem(reason: "expected an http:// or https:// URL such as http://127.0.0.1:8080"))
        }
        return .success(url)
    }
}

extension ValueParser where Value == String {
    /// Any text that is not empty (after trimming white space).
    static let nonEmpty = ValueParser<String> { text in
        text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            ? .failure(ValueProblem(reason: "expected a non-empty value"))
            : .success(text)
    }
}

extension Double {
    /// The number without a trailing `.0` when it is whole.
    fileprivate var formatted: String {
        rounded() == self && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
