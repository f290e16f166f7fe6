import Foundation

/// A scenario file that cannot be run: the file, the line, the field and what is wrong, as
/// `checkout.json:14: turns[2].expect.tool_called.name: expected a string`.
struct ScenarioFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file as given.
    var path: String
    /// The line (1-based), when known.
    var line: Int?
    /// The field's path in the file, empty for the file as a whole.
    var field: String
    /// What is wrong.
    var message: String

    var description: String {
        let place = line.map { "\(path):\($0)" } ?? path
        return field.isEmpty ? "\(place): \(message)" : "\(place): \(field): \(message)"
    }
}

/// A field of a scenario file that is wrong, before its line is known.
struct ScenarioFieldError: Error, Sendable, Hashable {
    /// The field's path, e.g. `scenarios[0].turns[2].expect`.
    var field: String
    /// What is wrong.
    var message: String
}
