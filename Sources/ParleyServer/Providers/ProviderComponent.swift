import Foundation

/// One engine the server runs on, as the start-up banner and `GET /v1/status` name it.
public struct ProviderComponent: Sendable, Hashable {
    /// What it does: `speech-to-text`, `language model`, `text-to-speech`, `voice activity`,
    /// `semantic_vad`.
    public var role: String
    /// What it is, safe to show anyone: a model or engine name, never a URL or key.
    public var name: String
    /// Where it runs, for the operator's banner only (may hold an endpoint URL).
    public var detail: String
    /// The languages it hears or speaks (ISO-639-1, sorted), or `nil` when it does not say.
    public var languages: [String]?

    /// Creates a component.
    public init(role: String, name: String, detail: String = "", languages: Set<String>? = nil) {
        self.role = role
        self.name = name
        self.detail = detail
        self.languages = languages?.sorted()
    }

    /// The banner line: `role: name detail`.
    public var summary: String { detail.isEmpty ? "\(role): \(name)" : "\(role): \(name) \(detail)" }
}
