import Foundation
import ParleyCore
import ParleyOpenAI

/// The language model of one conversation on a `LocalLLMServer`: OpenAI chat requests that
/// ask llama-server to keep the conversation's prompt cached (`cache_prompt`) in the slot the
/// conversation holds (`id_slot`), when it holds one, and that penalise repeated phrases with
/// llama.cpp's DRY sampler (`dry_multiplier`), which keeps a small model from looping without
/// penalising the common words every answer needs. Made by
/// `LocalLLMServer.conversationModel(configuration:)`; the slot is free again once every copy
/// of the model is gone.
public struct LocalConversationModel: LanguageModel {
    /// The slot this conversation's requests go to, or `nil` when every slot was taken and
    /// llama-server places them.
    public var slot: Int? { lease?.slot }

    private let lease: LocalLLMSlots.Lease?
    private let model: OpenAILanguageModel

    init(configuration: OpenAIConfiguration, lease: LocalLLMSlots.Lease?) {
        self.lease = lease
        var fields: [String: JSONValue] = ["cache_prompt": true, "dry_multiplier": 0.8]
        if let lease { fields["id_slot"] = .number(Double(lease.slot)) }
        model = OpenAILanguageModel(configuration: configuration, extraBodyFields: fields)
    }

    public func stream(_ request: ChatRequest) -> AsyncThrowingStream<LanguageModelEvent, any Error> {
        model.stream(request)
    }
}
