import Foundation
import Testing
@testable import ParleyCore

@Suite struct ToolTests {
    static let weatherSchema: JSONValue = [
        "type": "object",
        "properties": [
            "city": ["type": "string"],
            "unit": ["type": "string", "enum": ["c", "f"]],
            "days": ["type": "integer"],
            "detailed": ["type": "boolean"],
            "hours": ["type": "array", "items": ["type": "number"]],
        ],
        "required": ["city"],
        "additionalProperties": false,
    ]

    @Test(arguments: [
        (#"{"city":"Paris"}"#, []),
        (#"{"city":"Paris","unit":"c","days":3,"detailed":true,"hours":[1,2.5]}"#, []),
        (#"{"days":2.0,"city":"x"}"#, []),
        (#"{}"#, [#"$: missing required property "city""#]),
        (#"{"city":3}"#, ["$.city: expected string, got integer"]),
        (#"{"city":"x","unit":"k"}"#, [#"$.unit: expected one of "c", "f", got "k""#]),
        (#"{"city":"x","days":1.5}"#, ["$.days: expected integer, got number"]),
        (#"{"city":"x","detailed":"yes"}"#, ["$.detailed: expected boolean, got string"]),
        (#"{"city":"x","hours":[1,"two"]}"#, ["$.hours[1]: expected number, got string"]),
        (#"{"city":"x","hours":{}}"#, ["$.hours: expected array, got object"]),
        (#"{"city":"x","extra":1}"#, [#"$: unexpected property "extra""#]),
        (#"[1]"#, ["$: expected object, got array"]),
        (#"null"#, ["$: expected object, got null"]),
    ] as [(String, [String])])
    func schemaValidation(arguments: String, expected: [String]) throws {
        let value = try JSONValue(parsing: arguments)
        #expect(JSONSchemaValidator.violations(of: value, against: Self.weatherSchema) == expected)
    }

    @Test func typeListsAndNestedObjects() throws {
        let schema: JSONValue = [
            "type": "object",
            "properties": ["place": ["type": "object", "properties": ["lat": ["type": ["number", "null"]]], "required": ["lat"]]],
        ]
        #expect(JSONSchemaValidator.violations(of: try JSONValue(parsing: #"{"place":{"lat":null}}"#), against: schema) == [])
        #expect(JSONSchemaValidator.violations(of: try JSONValue(parsing: #"{"place":{"lat":"n"}}"#), against: schema)
            == ["$.place.lat: expected number or null, got string"])
        #expect(JSONSchemaValidator.violations(of: try JSONValue(parsing: #"{"place":{}}"#), against: schema)
            == [#"$.place: missing required property "lat""#])
    }

    @Test(arguments: [
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("2^10", "1024"),
        ("2 ** 3 ** 2", "512"),
        ("-2^2", "-4"),
        ("2^-1", "0.5"),
        ("10 / 4", "2.5"),
        ("7 % 3", "1"),
        ("1/3", "0.333333333333"),
        ("1.5e3 + 1", "1501"),
        ("sqrt(16) + abs(-2)", "6"),
        ("max(1, 5, 3) - min(4, 2)", "3"),
        ("round(2.5) + floor(1.9) + ceil(1.1)", "6"),
        ("12 × 3 ÷ 4", "9"),
        ("--3", "3"),
        ("pi", "3.14159265359"),
        ("ln(e)", "1"),
    ])
    func calculatorEvaluates(expression: String, expected: String) async throws {
        let output = try await CalculatorTool().call(arguments: ["expression": .string(expression)])
        #expect(output == expected)
    }

    @Test(arguments: [
        ("1 / 0", "division by zero"),
        ("1 +", "the expression ends too early"),
        ("(1 + 2", #"expected ")" but found end of expression"#),
        ("1 2", "unexpected number 2"),
        ("import os", #"unknown name "import""#),
        ("exit()", #"unexpected ")""#),
        ("foo(1)", #"unknown function "foo""#),
        ("sqrt(-1)", "square root of a negative number"),
        ("10^400", "the result is not a finite number"),
        ("1; 2", #"unexpected character ";""#),
        ("1..2", #"invalid number "1..2""#),
        ("sqrt(1, 2)", "sqrt takes one argument"),
    ])
    func calculatorRejects(expression: String, reason: String) async throws {
        await #expect(throws: ToolError("cannot evaluate \"\(expression)\": \(reason)")) {
            _ = try await CalculatorTool().call(arguments: ["expression": .string(expression)])
        }
    }

    @Test func calculatorBoundsNestingAndLength() {
        #expect(throws: ArithmeticExpression.Failure(message: "expression nested too deeply")) {
            _ = try ArithmeticExpression.evaluate(String(repeating: "(", count: 100) + "1" + String(repeating: ")", count: 100))
        }
        #expect(throws: ArithmeticExpression.Failure(message: "expression nested too deeply")) {
            _ = try ArithmeticExpression.evaluate(String(repeating: "-", count: 500) + "1")
        }
        #expect(throws: ArithmeticExpression.Failure(message: "expression longer than 1000 characters")) {
            _ = try ArithmeticExpression.evaluate(String(repeating: "1+", count: 600) + "1")
        }
    }

    @Test func currentTimeInANamedZone() async throws {
        let tool = CurrentTimeTool(defaultTimeZone: TimeZone(identifier: "Asia/Tokyo")!, now: { Date(timeIntervalSince1970: 1_700_000_000) })
        #expect(try await tool.call(arguments: ["timezone": "Europe/Paris"])
            == "2023-11-14T23:13:20+01:00 (Tuesday, 14 November 2023, 23:13, Europe/Paris)")
        #expect(try await tool.call(arguments: [:]) == "2023-11-15T07:13:20+09:00 (Wednesday, 15 November 2023, 07:13, Asia/Tokyo)")
        await #expect(throws: ToolError(#"unknown time zone "Mars/Olympus"; use an IANA name such as Europe/Paris"#)) {
            _ = try await tool.call(arguments: ["timezone": "Mars/Olympus"])
        }
    }

    @Test func registryReplacesToolsByNameAndAcceptsEmptyArguments() async {
        var registry = ToolRegistry([CalculatorTool(), CurrentTimeTool()])
        registry.register(CalculatorTool())
        #expect(registry.names == ["calculate", "get_current_time"])
        let result = await registry.execute(ToolCall(id: "1", name: "get_current_time", arguments: " "), timeout: .seconds(5))
        #expect(!result.isError)
    }
}
