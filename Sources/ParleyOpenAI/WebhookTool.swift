import Foundation
import ParleyCore
import ParleyNet

/// A tool a backend exposes as an HTTP endpoint, configured as data: the arguments are POSTed
/// as JSON and the response text goes back to the model.
public struct WebhookToolConfiguration: Sendable, Hashable, Codable {
    /// The tool's name for the model.
    public var name: String
    /// What the tool does, for the model.
    public var description: String
    /// A JSON Schema object for the arguments.
    public var parameters: JSONValue
    /// The endpoint that receives the arguments.
    public var url: URL
    /// Header fields sent with each call, for example an authorization token.
    public var headers: [String: String]
    /// How long to wait for the endpoint, in seconds.
    public var timeoutSeconds: Double

    /// Creates a configuration.
    public init(name: String, description: String, parameters: JSONValue, url: URL, headers: [String: String] = [:], timeoutSeconds: Double = 10) {
        self.name = name
        self.description = description
        self.parameters = parameters
        self.url = url
        self.headers = headers
        self.timeoutSeconds = timeoutSeconds
    }
}

/// A `Tool` that calls a webhook (see `WebhookToolConfiguration`).
public struct WebhookTool: Tool {
    /// The configuration this tool was made from.
    public let configuration: WebhookToolConfiguration
    /// The most response bytes returned to the model; longer responses are cut.
    public static let maxResponseBytes = 32 << 10

    private let client: HTTPClient

    /// Creates a webhook tool.
    public init(configuration: WebhookToolConfiguration, client: HTTPClient = .shared) {
        self.configuration = configuration
        self.client = client
    }

    public var name: String { configuration.name }
    public var description: String { configuration.description }
    public var parameters: JSONValue { configuration.parameters }

    /// POSTs `arguments` as JSON; returns the response text.
    /// - Throws: `ToolError` when the endpoint cannot be reached, times out or answers with an error status.
    public func call(arguments: JSONValue) async throws -> String {
        var headers = ["Content-Type": "application/json", "Accept": "application/json, text/plain"]
        headers.merge(configuration.headers) { _, configured in configured }
        let timeout = Duration.milliseconds(Int(max(configuration.timeoutSeconds, 0.001) * 1000))
        let request = HTTPClient.Request(
            url: configuration.url,
            method: "POST",
            headers: headers,
            body: try JSONEncoder().encode(arguments),
            idleTimeout: timeout + .seconds(1)
        )
        let client = client
        let host = configuration.url.host ?? configuration.url.absoluteString
        let (status, body) = try await withThrowingTaskGroup(of: (Int, Data)?.self) { group in
            group.addTask {
                do {
                    let response = try await client.stream(request)
                    return (response.status, try await response.bodyPrefix(Self.maxResponseBytes))
                } catch let error as HTTPClientError {
                    throw ToolError("the webhook at \(host) could not be reached (\(error.kind.rawValue))")
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw ToolError("the webhook at \(host) did not answer within \(timeout.secondsText)")
            }
            return result
        }
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard (200..<300).contains(status) else {
            throw ToolError("the webhook at \(host) answered HTTP \(status)\(text.isEmpty ? "" : ": \(text.prefix(500))")")
        }
        return text
    }
}
