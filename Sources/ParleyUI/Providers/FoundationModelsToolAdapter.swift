#if canImport(SwiftUI) && canImport(FoundationModels)
import Foundation
import FoundationModels
import ParleyCore

/// A Parley `Tool` offered to Foundation Models: its JSON Schema becomes a generation schema,
/// the model's arguments come back as JSON for the tool.
@available(iOS 26.0, macOS 26.0, *)
struct FoundationModelsToolAdapter: FoundationModels.Tool {
    typealias Arguments = GeneratedContent
    typealias Output = String

    let name: String
    let description: String
    let parameters: GenerationSchema
    private let tool: any ParleyCore.Tool

    /// - Throws: when the tool's schema cannot be expressed as a generation schema.
    init(_ tool: any ParleyCore.Tool) throws {
        self.tool = tool
        name = tool.name
        description = tool.description
        parameters = try GenerationSchema(root: JSONSchemaBridge.schema(for: tool.parameters, named: tool.name), dependencies: [])
    }

    func call(arguments: GeneratedContent) async throws -> String {
        let json = (try? JSONValue(parsing: arguments.jsonString)) ?? .object([:])
        do {
            return try await tool.call(arguments: json)
        } catch let error as ToolError {
            return "The tool failed: \(error.message)"
        }
    }
}

/// Turns the JSON Schema subset Parley tools use (objects of strings, numbers, integers,
/// booleans, string enums and arrays of those) into Foundation Models' dynamic schemas.
@available(iOS 26.0, macOS 26.0, *)
enum JSONSchemaBridge {
    static func schema(for json: JSONValue, named name: String) -> DynamicGenerationSchema {
        let description = json["description"]?.stringValue
        if let choices = json["enum"], case .array(let values) = choices {
            return DynamicGenerationSchema(name: name, description: description, anyOf: values.compactMap(\.stringValue))
        }
        switch json["type"]?.stringValue {
        case "string": return DynamicGenerationSchema(type: String.self)
        case "integer": return DynamicGenerationSchema(type: Int.self)
        case "number": return DynamicGenerationSchema(type: Double.self)
        case "boolean": return DynamicGenerationSchema(type: Bool.self)
        case "array":
            return DynamicGenerationSchema(arrayOf: schema(for: json["items"] ?? .object([:]), named: "\(name)_item"))
        default:
            var required: Set<String> = []
            if case .array(let names)? = json["required"] { required = Set(names.compactMap(\.stringValue)) }
            var properties: [DynamicGenerationSchema.Property] = []
            if case .object(let members)? = json["properties"] {
                for key in members.keys.sorted() {
                    let member = members[key] ?? .object([:])
                    properties.append(DynamicGenerationSchema.Property(
                        name: key, description: member["description"]?.stringValue,
                        schema: schema(for: member, named: "\(name)_\(key)"), isOptional: !required.contains(key)
                    ))
                }
            }
            return DynamicGenerationSchema(name: name, description: description, properties: properties)
        }
    }
}
#endif
