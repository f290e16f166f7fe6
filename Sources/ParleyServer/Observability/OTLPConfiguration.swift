import Foundation

/// Where and how traces are exported, from OpenTelemetry's standard environment variables:
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (the
/// base, `/v1/traces` appended), `OTEL_EXPORTER_OTLP[_TRACES]_HEADERS` (`k=v,k2=v2`,
/// values percent-decoded), `OTEL_EXPORTER_OTLP[_TRACES]_TIMEOUT` (ms), `OTEL_SERVICE_NAME`,
/// and the batch processor's `OTEL_BSP_SCHEDULE_DELAY` (ms), `OTEL_BSP_MAX_QUEUE_SIZE` and
/// `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`. Parley speaks OTLP/HTTP with JSON bodies.
public struct OTLPConfiguration: Sendable, Hashable {
    /// Where spans are POSTed.
    public var endpoint: URL
    /// Extra request headers (for example a collector's API key); never logged.
    public var headers: [String: String] = [:]
    /// The `service.name` resource attribute.
    public var serviceName = "parley"
    /// How long spans wait to be sent together.
    public var scheduleDelay: Duration = .seconds(5)
    /// Spans waiting at most; more are dropped (and counted).
    public var maxQueueSize = 2_048
    /// Spans per request at most.
    public var maxExportBatchSize = 512
    /// How long one export may wait for the collector.
    public var timeout: Duration = .seconds(10)

    /// Creates a configuration exporting to `endpoint`.
    public init(endpoint: URL) { self.endpoint = endpoint }

    /// Reads the configuration; `nil` when no endpoint is set (or the SDK is disabled).
    /// Problems are appended to `problems`, one line each.
    public static func load(environment: [String: String], problems: inout [String]) -> OTLPConfiguration? {
        func value(_ key: String) -> String? {
            guard let raw = environment[key]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        func milliseconds(_ keys: String...) -> Duration? {
            guard let key = keys.first(where: { value($0) != nil }), let raw = value(key) else { return nil }
            guard let number = Int(raw), number > 0 else {
                problems.append("\(key): \"\(raw)\" is not a positive number of milliseconds")
                return nil
            }
            return .milliseconds(number)
        }
        func count(_ key: String) -> Int? {
            guard let raw = value(key) else { return nil }
            guard let number = Int(raw), number > 0 else {
                problems.append("\(key): \"\(raw)\" is not a positive whole number")
                return nil
            }
            return number
        }
        if value("OTEL_SDK_DISABLED")?.lowercased() == "true" || value("OTEL_TRACES_EXPORTER")?.lowercased() == "none" { return nil }
        let endpointText: String
        if let traces = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            endpointText = traces
        } else if let base = value("OTEL_EXPORTER_OTLP_ENDPOINT") {
            endpointText = (base.hasSuffix("/") ? base : base + "/") + "v1/traces"
        } else {
            return nil
        }
        guard let endpoint = URL(string: endpointText), ["http", "https"].contains(endpoint.scheme ?? ""), endpoint.host != nil else {
            problems.append("OTEL_EXPORTER_OTLP_ENDPOINT: \"\(endpointText)\" is not an http(s) URL")
            return nil
        }
        if let protocolName = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? value("OTEL_EXPORTER_OTLP_PROTOCOL"), protocolName != "http/json" {
            problems.append("OTEL_EXPORTER_OTLP_PROTOCOL: \"\(protocolName)\" is not supported; Parley exports http/json")
        }
        var configuration = OTLPConfiguration(endpoint: endpoint)
        for key in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            for pair in (value(key) ?? "").split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, !parts[0].isEmpty else {
                    problems.append("\(key): an entry is not key=value")
                    continue
                }
                configuration.headers[parts[0].removingPercentEncoding ?? parts[0]] = parts[1].removingPercentEncoding ?? parts[1]
            }
        }
        if let name = value("OTEL_SERVICE_NAME") { configuration.serviceName = name }
        if let delay = milliseconds("OTEL_BSP_SCHEDULE_DELAY") { configuration.scheduleDelay = delay }
        if let timeout = milliseconds("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT") { configuration.timeout = timeout }
        if let size = count("OTEL_BSP_MAX_QUEUE_SIZE") { configuration.maxQueueSize = size }
        if let size = count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") { configuration.maxExportBatchSize = size }
        return configuration
    }
}

extension ServerSettings {
    /// The name of the server's language model, as traces report it (`gen_ai.request.model`).
    var languageModelName: String {
        switch languageModel {
        case .remote(_, _, let model): model
        case .embedded: localLanguageModelPath.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent } ?? "smollm2-135m-instruct"
        }
    }
}
