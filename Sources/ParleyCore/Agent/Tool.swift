import Foundation

/// A function the agent's model may call: a name, a description, a JSON Schema for its
/// arguments and an async body returning text for the model.
///
/// ```swift
/// struct Echo: Tool {
///     let name = "echo"
///     let description = "Repeats the text."
///     let parameters: JSONValue = .object(["type": "object",
///         "properties": .object(["text": .object(["type": "string"])]), "required": .array(["text"])])
///     func call(arguments: JSONValue) async throws -> String { arguments["text"]?.stringValue ?? "" }
/// }
/// ```
public protocol Tool: Sendable {
    /// The name the model calls the tool by (letters, digits, `_` and `-`).
    var name: String { get }
    /// What the tool does and when to use it, for the model.
    var description: String { get }
    /// A JSON Schema object for the arguments, in the subset `JSONSchemaValidator` checks.
    var parameters: JSONValue { get }
    /// Runs the tool.
    /// - Parameter arguments: the decoded arguments, already validated against `parameters`.
    /// - Returns: text for the model.
    /// - Throws: `ToolError` with a message for the model; any other error is described to it.
    ///   Tools should honour cancellation; the agent stops waiting at its timeout either way.
    func call(arguments: JSONValue) async throws -> String
    /// Whether interrupting the turn cancels a call already running (default `false`: the call
    /// finishes and its result is kept in the conversation).
    var isCancellable: Bool { get }
    /// How long one call may run, when not the agent's `toolTimeout`.
    var timeout: Duration? { get }
}

extension Tool {
    public var isCancellable: Bool { false }
    public var timeout: Duration? { nil }

    /// The definition sent to the model.
    public var definition: ToolDefinition {
        ToolDefinition(name: name, description: description, parameters: parameters)
    }
}

/// A failure a tool reports to the model in its own words.
public struct ToolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message the model sees.
    public var message: String

    /// Creates a tool error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// What running one tool call produced: the text for the model, and whether it is an error.
public struct ToolResult: Sendable, Hashable {
    /// The text returned to the model as the tool message.
    public var output: String
    /// Whether the call failed (unknown tool, invalid arguments, error, timeout).
    public var isError: Bool

    /// Creates a result.
    public init(output: String, isError: Bool) {
        self.output = output
        self.isError = isError
    }
}
