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

    /// Creates a component.
    public init(role: String, name: String, detail: String = "") {
        self.role = role
        self.name = name
        self.detail = detail
    }

    /// The banner line: `role: name detail`.
    public var summary: String { detail.isEmpty ? "\(role): \(name)" : "\(role): \(name) \(detail)" }
}
