import Foundation

/// The built-in `get_current_time` tool: the current date and time in an IANA time zone.
public struct CurrentTimeTool: Tool {
    public let name = "get_current_time"
    public let description =
        "Returns the current date and time. Pass an IANA time zone such as Europe/Paris or America/New_York; "
        + "without one the server's time zone is used."
    public let parameters: JSONValue = .object([
        "type": "object",
        "properties": .object([
            "timezone": .object([
                "type": "string",
                "description": "IANA time zone name, for example Europe/Paris",
            ])
        ]),
        "additionalProperties": false,
    ])

    private let defaultTimeZone: TimeZone
    private let now: @Sendable () -> Date

    /// Creates the tool.
    /// - Parameters:
    ///   - defaultTimeZone: the zone used when the model names none.
    ///   - now: the source of the current time.
    public init(defaultTimeZone: TimeZone = .current, now: @escaping @Sendable () -> Date = Date.init) {
        self.defaultTimeZone = defaultTimeZone
        self.now = now
    }

    /// Returns a line like `2025-03-01T14:05:09+01:00 (Saturday, 1 March 2025, 14:05, Europe/Paris)`.
    public func call(arguments: JSONValue) async throws -> String {
        var timeZone = defaultTimeZone
        if let identifier = arguments["timezone"]?.stringValue, !identifier.isEmpty {
            guard let named = TimeZone(identifier: identifier) else {
                throw ToolError("unknown time zone \"\(identifier)\"; use an IANA name such as Europe/Paris")
            }
            timeZone = named
        }
        let date = now()
        let iso = ISO8601DateFormatter()
        iso.timeZone = timeZone
        iso.formatOptions = [.withInternetDateTime]
        let spoken = DateFormatter()
        spoken.locale = Locale(identifier: "en_US_POSIX")
        spoken.timeZone = timeZone
        spoken.dateFormat = "EEEE, d MMMM yyyy, HH:mm"
        return "\(iso.string(from: date)) (\(spoken.string(from: date)), \(timeZone.identifier))"
    }
}
