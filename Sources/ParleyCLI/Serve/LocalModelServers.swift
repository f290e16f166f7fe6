import Foundation
import ParleyCore
import ParleyNet

/// Local model servers `parley serve` notices (and names) without switching to them: a user who
/// runs Ollama probably wants to know that one setting points Parley at it.
enum LocalModelServers {
    /// An Ollama server found at its default address.
    struct Ollama {
        /// Its base URL.
        var url: URL
        /// The models it has pulled.
        var models: [String]

        /// The line `parley serve` prints.
        var suggestion: String {
            let model = models.first ?? "MODEL"
            let listed = models.isEmpty ? "no models pulled yet" : "models: " + models.prefix(5).joined(separator: ", ")
            return "An Ollama server answers at \(url.absoluteString) (\(listed)). Parley keeps its embedded model; "
                + "to use Ollama instead: PARLEY_LLM_URL=\(url.absoluteString)/v1 PARLEY_LLM_MODEL=\(model)"
        }
    }

    /// Ollama at `url` (default: its standard address), when it answers within half a second.
    static func ollama(at url: URL = URL(string: "http://127.0.0.1:11434")!) async -> Ollama? {
        let request = HTTPClient.Request(url: url.appendingPathComponent("api/tags"), idleTimeout: .milliseconds(500))
        guard let response = try? await HTTPClient.shared.send(request), response.status == 200,
              let body = try? JSONDecoder().decode(JSONValue.self, from: response.body),
              case .array(let models)? = body["models"] else { return nil }
        return Ollama(url: url, models: models.compactMap { $0["name"]?.stringValue })
    }
}
