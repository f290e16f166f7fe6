import Foundation

/// The built-in `calculate` tool: evaluates an arithmetic expression with `ArithmeticExpression`
/// (a parser, never code evaluation).
public struct CalculatorTool: Tool {
    public let name = "calculate"
    public let description =
        "Evaluates an arithmetic expression exactly as written, for example (12.5 * 4) / 3 or 2^10 or sqrt(2). "
        + "Supports + - * / % ^, parentheses, pi, e and sqrt, abs, round, floor, ceil, ln, log10, exp, sin, cos, tan, min, max."
    public let parameters: JSONValue = .object([
        "type": "object",
        "properties": .object([
            "expression": .object(["type": "string", "description": "The expression to evaluate"])
        ]),
        "required": .array(["expression"]),
        "additionalProperties": false,
    ])

    /// Creates the tool.
    public init() {}

    /// Returns the value of `arguments.expression`, formatted with up to 12 significant digits.
    public func call(arguments: JSONValue) async throws -> String {
        let expression = arguments["expression"]?.stringValue ?? ""
        do {
            return Self.format(try ArithmeticExpression.evaluate(expression))
        } catch {
            throw ToolError("cannot evaluate \"\(expression)\": \(error.message)")
        }
    }

    /// Formats a result: integers without a fraction, others with up to 12 significant digits.
    static func format(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 {
            return String(Int64(value))
        }
        return String(format: "%.12g", value)
    }
}
