import Foundation

/// The tools an agent offers, by name, and the one place tool calls are checked and run.
///
/// Running a call never throws: an unknown tool, arguments that are not JSON or break the
/// schema, a tool error and a timeout all become a `ToolResult` with `isError` and a message
/// the model can act on.
public struct ToolRegistry: Sendable {
    private var tools: [any Tool] = []

    /// Creates a registry; a later tool replaces an earlier one with the same name.
    public init(_ tools: [any Tool] = []) {
        for tool in tools { register(tool) }
    }

    /// Adds `tool`, replacing a tool with the same name.
    public mutating func register(_ tool: any Tool) {
        if let index = tools.firstIndex(where: { $0.name == tool.name }) {
            tools[index] = tool
        } else {
            tools.append(tool)
        }
    }

    /// Whether there are no tools.
    public var isEmpty: Bool { tools.isEmpty }

    /// The tools' names in registration order.
    public var names: [String] { tools.map(\.name) }

    /// The definitions sent to the model, in registration order.
    public var definitions: [ToolDefinition] { tools.map(\.definition) }

    /// The tool called `name`, if registered.
    public func tool(named name: String) -> (any Tool)? {
        tools.first { $0.name == name }
    }

    /// Validates and runs one call, giving up after the tool's own timeout or `timeout`.
    /// - Parameters:
    ///   - call: the call the model made.
    ///   - timeout: how long to wait for a tool without a timeout of its own.
    ///   - clock: the clock the timeout is measured on.
    public func execute(
        _ call: ToolCall,
        timeout: Duration,
        clock: any Clock<Duration> = ContinuousClock()
    ) async -> ToolResult {
        guard let tool = tool(named: call.name) else {
            let available = names.isEmpty ? "none" : names.joined(separator: ", ")
            return ToolResult(output: "Error: there is no tool named \"\(call.name)\". Available tools: \(available).", isError: true)
        }
        let arguments: JSONValue
        let argumentText = call.arguments.trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            arguments = argumentText.isEmpty ? .object([:]) : try JSONValue(parsing: argumentText)
        } catch {
            return ToolResult(output: "Error: the arguments for \(call.name) are not valid JSON: \(argumentText)", isError: true)
        }
        let violations = JSONSchemaValidator.violations(of: arguments, against: tool.parameters)
        guard violations.isEmpty else {
            return ToolResult(
                output: "Error: invalid arguments for \(call.name): \(violations.joined(separator: "; ")).",
                isError: true
            )
        }
        let timeout = tool.timeout ?? timeout
        do {
            let output = try await ToolDeadline.run(timeout: timeout, clock: clock) {
                try await tool.call(arguments: arguments)
            }
            return ToolResult(output: output, isError: false)
        } catch let error as ToolError {
            return ToolResult(output: "Error: \(error.message)", isError: true)
        } catch is ToolDeadline.Expired {
            return ToolResult(output: "Error: \(call.name) did not finish within \(timeout.secondsText).", isError: true)
        } catch is CancellationError {
            return ToolResult(output: "Error: \(call.name) was cancelled.", isError: true)
        } catch {
            return ToolResult(output: "Error: \(call.name) failed: \(error)", isError: true)
        }
    }
}

