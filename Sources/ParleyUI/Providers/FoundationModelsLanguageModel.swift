#if canImport(SwiftUI) && canImport(FoundationModels)
import Foundation
import FoundationModels
import ParleyCore

/// The on-device Apple Intelligence model (Foundation Models, iOS 26 and macOS 26) as a
/// `LanguageModel`, with tool calling: for an agent that runs entirely on the device.
///
/// The tools given here run inside the model's turn (Foundation Models calls them itself);
/// the tools of a `ChatRequest` are not used. The conversation is rendered into the
/// instructions and the prompt, so each request is independent.
///
/// ```swift
/// let model = FoundationModelsLanguageModel(tools: [VisionImageClassifierTool(image: { await picker.image })])
/// ```
@available(iOS 26.0, macOS 26.0, *)
public struct FoundationModelsLanguageModel: ParleyCore.LanguageModel {
    /// Tools the model may call during its answer.
    public var tools: [any ParleyCore.Tool]
    /// Instructions used when the request carries no system message.
    public var defaultInstructions: String

    /// Creates the model.
    public init(
        tools: [any ParleyCore.Tool] = [],
        defaultInstructions: String = "You are a friendly voice assistant. Answer in one or two short spoken sentences."
    ) {
        self.tools = tools
        self.defaultInstructions = defaultInstructions
    }

    /// Why the on-device model cannot answer, in words, or `nil` when it can.
    public static var unavailabilityReason: String? {
        let availability = SystemLanguageModel.default.availability
        if case .available = availability { return nil }
        guard case .unavailable(let reason) = availability else { return "The on-device model is unavailable." }
        if reason == .deviceNotEligible { return "This device does not support Apple Intelligence." }
        if reason == .appleIntelligenceNotEnabled { return "Apple Intelligence is turned off; turn it on in Settings." }
        if reason == .modelNotReady { return "The on-device model is still downloading; try again shortly." }
        return "The on-device model is unavailable."
    }

    public func stream(_ request: ParleyCore.ChatRequest) -> AsyncThrowingStream<ParleyCore.LanguageModelEvent, any Error> {
        let tools = self.tools
        let (instructions, prompt) = Self.render(request.messages, defaultInstructions: defaultInstructions)
        let options = GenerationOptions(temperature: request.temperature, maximumResponseTokens: request.maxTokens)
        // Unbounded: text deltas of one answer.
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            let task = Task {
                do {
                    if let reason = Self.unavailabilityReason {
                        throw ProviderError(.server, provider: Self.provider, message: reason)
                    }
                    let adapters: [any FoundationModels.Tool] = try tools.map { try FoundationModelsToolAdapter($0) }
                    let session = LanguageModelSession(tools: adapters) { instructions }
                    var written = ""
                    for try await snapshot in session.streamResponse(to: Prompt { prompt }, options: options) {
                        let text = snapshot.content
                        guard text.count > written.count, text.hasPrefix(written) else { continue }
                        continuation.yield(.textDelta(String(text.dropFirst(written.count))))
                        written = text
                    }
                    continuation.yield(.finished(.stop, nil))
                    continuation.finish()
                } catch let error as ProviderError {
                    continuation.finish(throwing: error)
                } catch is CancellationError {
                    continuation.finish(throwing: ProviderError(.cancelled, provider: Self.provider, message: "The answer was cancelled."))
                } catch {
                    continuation.finish(throwing: Self.providerError(error))
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The system messages as instructions; the rest of the conversation and the newest
    /// message as the prompt.
    static func render(_ messages: [ParleyCore.ChatMessage], defaultInstructions: String) -> (instructions: String, prompt: String) {
        var instructions: [String] = []
        var lines: [String] = []
        for message in messages {
            switch message {
            case .system(let text):
                instructions.append(text)
            case .user(let parts):
                let text = parts.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined(separator: " ")
                lines.append("User: \(text)")
            case .assistant(let text, _, let interrupted):
                if !text.isEmpty { lines.append("Assistant: \(text)\(interrupted ? " (interrupted)" : "")") }
            case .tool(_, let content):
                lines.append("Tool result: \(content)")
            }
        }
        let newest = lines.popLast() ?? ""
        let prompt = lines.isEmpty ? newest : "Conversation so far:\n\(lines.joined(separator: "\n"))\n\n\(newest)"
        return (instructions.isEmpty ? defaultInstructions : instructions.joined(separator: "\n\n"), prompt)
    }

    private static func providerError(_ error: any Error) -> ProviderError {
        if let generation = error as? LanguageModelSession.GenerationError {
            switch generation {
            case .exceededContextWindowSize:
                return ProviderError(.invalidRequest, provider: provider, message: "The conversation is too long for the on-device model.")
            case .rateLimited:
                return ProviderError(.rateLimited, provider: provider, message: "The on-device model is busy; try again shortly.")
            case .guardrailViolation, .refusal:
                return ProviderError(.invalidRequest, provider: provider, message: "The on-device model declined to answer that.")
            default:
                break
            }
        }
        return ProviderError(.server, provider: provider, message: "The on-device model failed: \(error.localizedDescription)")
    }

    static let provider = "foundation-models"
}
#endif
