import Foundation

/// Which shapes of the OpenAI Realtime protocol a connection speaks.
public enum RealtimeDialect: String, Sendable, Hashable, CaseIterable {
    /// The generally available API (the default).
    case ga
    /// The beta API, chosen by the client header `OpenAI-Beta: realtime=v1`.
    case beta

    /// The dialect a client asked for with the value of its `OpenAI-Beta` header, if any.
    public init(openAIBetaHeader: String?) {
        let asksForBeta = openAIBetaHeader?.split(separator: ",").contains {
            $0.trimmingCharacters(in: .whitespaces) == "realtime=v1"
        } ?? false
        self = asksForBeta ? .beta : .ga
    }
}
