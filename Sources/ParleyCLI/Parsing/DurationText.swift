import Foundation

/// Durations written the way people write them on a command line: `90s`, `10m`, `2h`, `1h30m`, `250ms`.
enum DurationText {
    /// Parses a sequence of `<whole number><unit>` parts (units `ms`, `s`, `m`, `h`, `d`).
    /// - Returns: the total, or `nil` when the text is not such a sequence or overflows.
    static func parse(_ text: String) -> Duration? {
        let characters = Array(text.lowercased())
        guard !characters.isEmpty else { return nil }
        var index = 0
        var totalMilliseconds: Int64 = 0
        while index < characters.count {
            var digits = ""
            while index < characters.count, characters[index].isASCII, characters[index].isNumber {
                digits.append(characters[index])
                index += 1
            }
            var unit = ""
            while index < characters.count, characters[index].isLetter {
                unit.append(characters[index])
                index += 1
            }
            guard !digits.isEmpty, digits.count <= 9, let amount = Int64(digits), let scale = millisecondsPerUnit[unit] else {
                return nil
            }
            let (part, overflow) = amount.multipliedReportingOverflow(by: scale)
            guard !overflow else { return nil }
            let (sum, sumOverflow) = totalMilliseconds.addingReportingOverflow(part)
            guard !sumOverflow else { return nil }
            totalMilliseconds = sum
        }
        return .milliseconds(totalMilliseconds)
    }

    /// Writes a duration the way `parse` reads it, hours first: `2h`, `1h30m`, `24h`, `1m30s`.
    static func format(_ duration: Duration) -> String {
        var remaining = Int64(duration.components.seconds) * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        guard remaining > 0 else { return "0s" }
        var text = ""
        for (unit, scale) in [("h", Int64(3_600_000)), ("m", 60_000), ("s", 1000), ("ms", 1)] where remaining >= scale {
            text += "\(remaining / scale)\(unit)"
            remaining %= scale
        }
        return text
    }

    private static let millisecondsPerUnit: [String: Int64] = [
        "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
    ]
}

