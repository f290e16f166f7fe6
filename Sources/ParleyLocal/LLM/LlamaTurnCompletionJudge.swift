import Foundation
import ParleyCore
import ParleyNet

/// Reads a pause's words with the small chat model of a `LocalLLMServer` (SmolLM2-135M-Instruct)
/// and says whether a thought ends there, the way LiveKit's turn detector asks a small LM for
/// the end of the user's message.
///
/// The transcript, its final marks taken off ("Set an alarm for." → "Set an alarm for"), is
/// the open user message of a ChatML prompt; llama-server's `/completion` gives the next
/// token's probabilities (`n_probs`, `n_predict` 1). The probability that the message ends
/// there is that of a token ending the sentence (".", "?", "!") or the message (`<|im_end|>`):
/// after "What is the capital of Australia" it is 0.87, after "Could you check if" under 0.001.
/// Below `threshold` the thought is unfinished. One prompt of a few dozen tokens, 30–80 ms on
/// one thread. Requests go to a slot of their own, so they never evict a conversation's cache.
///
/// ```swift
/// let judge = server.turnCompletionJudge()
/// let verdict = try await judge.judge("I'd like to book a flight to")  // isComplete == false
/// ```
public struct LlamaTurnCompletionJudge: TurnCompletionJudge {
    /// SmolLM2's threshold, chosen on calibration sentences of neither the turn corpus nor the
    /// held-out set: complete ones scored 0.078 and up, unfinished ones 0.008 and below.
    public static let smolLM2Threshold: Float = 0.025
    /// SmolLM2's `<|im_end|>`.
    public static let smolLM2EndOfTurnToken = 2

    private let completionURL: URL
    private let lease: LocalLLMSlots.Lease?
    private let threshold: Float
    private let endOfTurnToken: Int
    private let client: HTTPClient

    /// A judge asking the llama-server at `baseURL` (its `/completion`, not the OpenAI API).
    /// - Parameters:
    ///   - baseURL: the server's root, `http://127.0.0.1:PORT`.
    ///   - threshold: the end probability below which a thought is unfinished.
    ///   - endOfTurnToken: the id of the model's end-of-message token.
    public init(
        baseURL: URL, threshold: Float = smolLM2Threshold, endOfTurnToken: Int = smolLM2EndOfTurnToken, client: HTTPClient = .shared
    ) {
        self.init(baseURL: baseURL, lease: nil, threshold: threshold, endOfTurnToken: endOfTurnToken, client: client)
    }

    init(baseURL: URL, lease: LocalLLMSlots.Lease?, threshold: Float, endOfTurnToken: Int, client: HTTPClient) {
        completionURL = baseURL.appendingPathComponent("completion")
        self.lease = lease
        self.threshold = threshold
        self.endOfTurnToken = endOfTurnToken
        self.client = client
    }

    /// Asks the model how likely the message ends after `transcript`.
    /// - Throws: `ProviderError` (provider `llama-server`) when the server cannot be reached,
    ///   answers with an error status or with no probabilities.
    public func judge(_ transcript: String) async throws -> TurnCompletionVerdict {
        let words = Self.withoutFinalMarks(transcript)
        guard !words.isEmpty else { return TurnCompletionVerdict(probability: 1, isComplete: true) }
        var body: [String: JSONValue] = [
            "prompt": .string("<|im_start|>user\n" + words), "n_predict": .number(1), "n_probs": .number(40),
            "temperature": .number(0), "cache_prompt": .bool(true),
        ]
        if let lease { body["id_slot"] = .number(Double(lease.slot)) }
        let request = HTTPClient.Request(
            url: completionURL, method: "POST", headers: ["Content-Type": "application/json"],
            body: try JSONEncoder().encode(JSONValue.object(body)), idleTimeout: .seconds(5)
        )
        let response: HTTPClient.Response
        do {
            response = try await client.send(request, maxBodyBytes: 1 << 20)
        } catch {
            throw ProviderError(.connectivity, provider: "llama-server", message: "turn completion judge: \(error)")
        }
        guard response.status == 200 else {
            throw ProviderError(.server, provider: "llama-server", message: "turn completion judge: HTTP \(response.status)")
        }
        guard let next = try? JSONDecoder().decode(CompletionAnswer.self, from: response.body).completionProbabilities.first else {
            throw ProviderError(.server, provider: "llama-server", message: "turn completion judge: no token probabilities in the answer")
        }
        let probability = next.topLogprobs.reduce(Float(0)) { sum, candidate in
            endsMessage(candidate) ? sum + Float(exp(candidate.logprob)) : sum
        }
        return TurnCompletionVerdict(probability: min(1, probability), isComplete: probability >= threshold)
    }

    /// `transcript` without the marks Whisper ends every segment with, and without the space
    /// around it: the model is asked what comes next.
    static func withoutFinalMarks(_ transcript: String) -> String {
        var text = Substring(transcript.trimmingCharacters(in: .whitespacesAndNewlines))
        while let last = text.last, last.isWhitespace || ".?!…".contains(last) { text.removeLast() }
        return String(text)
    }

    /// Whether the candidate ends the sentence or the message ("..." trails off instead).
    private func endsMessage(_ candidate: CompletionAnswer.Candidate) -> Bool {
        if candidate.id == endOfTurnToken { return true }
        let text = candidate.token.trimmingCharacters(in: .whitespaces)
        return !text.hasPrefix("..") && (text.hasPrefix(".") || text.hasPrefix("?") || text.hasPrefix("!"))
    }
}

/// The part of llama-server's `/completion` answer the judge reads.
private struct CompletionAnswer: Decodable {
    struct Candidate: Decodable {
        var id: Int
        var token: String
        var logprob: Double
    }

    struct Position: Decodable {
        var topLogprobs: [Candidate]
        enum CodingKeys: String, CodingKey { case topLogprobs = "top_logprobs" }
    }

    var completionProbabilities: [Position]
    enum CodingKeys: String, CodingKey { case completionProbabilities = "completion_probabilities" }
}

extension LocalLLMServer {
    /// A turn completion judge on this server's model, with a slot of its own while one is
    /// free (start the server with a slot more than its conversations need).
    public func turnCompletionJudge(threshold: Float = LlamaTurnCompletionJudge.smolLM2Threshold) -> LlamaTurnCompletionJudge {
        LlamaTurnCompletionJudge(
            baseURL: URL(string: "http://127.0.0.1:\(port)")!, lease: slots.lease(), threshold: threshold,
            endOfTurnToken: LlamaTurnCompletionJudge.smolLM2EndOfTurnToken, client: .shared
        )
    }
}

extension LocalLLMServer.Configuration {
    /// Adds a slot, with as much context as each of the others, for `turnCompletionJudge()`.
    public mutating func addTurnCompletionJudgeSlot() {
        let perSlot = contextSize / max(1, parallelSlots)
        parallelSlots += 1
        contextSize += perSlot
    }
}
