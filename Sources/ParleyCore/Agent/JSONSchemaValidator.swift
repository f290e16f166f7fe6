import Foundation

/// Checks JSON values against the JSON Schema subset tools use: `type` (object, string, number,
/// integer, boolean, array, null, or a list of these), `enum`, `properties`, `required`,
/// `additionalProperties: false` and `items`. Other keywords are ignored.
public enum JSONSchemaValidator {
    /// Every way `value` breaks `schema`, as readable lines like `$.unit: expected one of "c", "f"`;
    /// empty when it conforms.
    public static func violations(of value: JSONValue, against schema: JSONValue) -> [String] {
        var violations: [String] = []
        check(value, against: schema, at: "$", into: &violations)
        return violations
    }

    private static func check(_ value: JSONValue, against schema: JSONValue, at path: String, into violations: inout [String]) {
        guard case .object = schema else { return }
        if let types = allowedTypes(schema["type"]), !types.contains(where: { matches(value, type: $0) }) {
            violations.append("\(path): expected \(types.joined(separator: " or ")), got \(typeName(of: value))")
            return
        }
        if case .array(let options) = schema["enum"], !options.contains(value) {
            let listed = options.map(\.jsonText).joined(separator: ", ")
            violations.append("\(path): expected one of \(listed), got \(value.jsonText)")
        }
        switch value {
        case .object(let members):
            if case .array(let required) = schema["required"] {
                for case .string(let name) in required where members[name] == nil {
                    violations.append("\(path): missing required property \"\(name)\"")
                }
            }
            let properties: [String: JSONValue]
            if case .object(let declared) = schema["properties"] { properties = declared } else { properties = [:] }
            for name in members.keys.sorted() {
                guard let member = members[name] else { continue }
                if let propertySchema = properties[name] {
                    check(member, against: propertySchema, at: "\(path).\(name)", into: &violations)
                } else if schema["additionalProperties"] == .bool(false) {
                    violations.append("\(path): unexpected property \"\(name)\"")
                }
            }
        case .array(let elements):
            if let itemSchema = schema["items"] {
                for (index, element) in elements.enumerated() {
                    check(element, against: itemSchema, at: "\(path)[\(index)]", into: &violations)
                }
            }
        default:
            break
        }
    }

    private static func allowedTypes(_ type: JSONValue?) -> [String]? {
        switch type {
        case .string(let name): [name]
        case .array(let names): names.compactMap(\.stringValue)
        default: nil
        }
    }

    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool),
             ("number", .number), ("null", .null):
            true
        case ("integer", .number(let number)):
            number.rounded() == number && number.isFinite
        default:
            false
        }
    }

    private static func typeName(of value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .number(let number): number.rounded() == number ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
