import Foundation
import ParleyCore
import ParleyOpenAI

/// The server tools an agent definition asks for.
enum AgentTools {
    /// The registry of an agent's tools: built-ins and webhooks (a definition is validated before
    /// it is stored, so unknown entries cannot occur here and are skipped).
    static func registry(for agent: AgentDefinition) -> ToolRegistry {
        var registry = ToolRegistry()
        for specification in agent.tools ?? [] {
            switch specification.type {
            case "builtin" where specification.name == "get_current_time":
                registry.register(CurrentTimeTool())
            case "builtin" where specification.name == "calculate":
                registry.register(CalculatorTool())
            case "webhook":
                guard let url = specification.url.flatMap(URL.init(string:)) else { continue }
                registry.register(WebhookTool(configuration: WebhookToolConfiguration(
                    name: specification.name,
                    description: specification.description ?? "",
                    parameters: specification.parameters ?? .object(["type": .string("object"), "properties": .object([:])]),
                    url: url,
                    headers: specification.headers ?? [:],
                    timeoutSeconds: Double(specification.timeoutMs ?? 10_000) / 1000
                )))
            default:
                continue
            }
        }
        return registry
    }
}

/// A language model an agent names instead of the server's default.
enum AgentLanguageModel {
    /// The model for an agent's `llm` settings, or `nil` when they name no endpoint.
    static func make(_ settings: AgentDefinition.LanguageModelSettings) -> (any LanguageModel)? {
        guard let base = settings.baseURL.flatMap(URL.init(string:)), let model = settings.model else { return nil }
        return OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: base, apiKey: settings.apiKey, model: model))
    }
}
