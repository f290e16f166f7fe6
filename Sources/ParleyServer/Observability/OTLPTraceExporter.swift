import Foundation
import ParleyCore
import ParleyNet

/// Sends finished spans to an OpenTelemetry collector over OTLP/HTTP with JSON bodies
/// (`POST …/v1/traces`, an `ExportTraceServiceRequest`), in batches, off every session's path.
///
/// `submit` only appends to a bounded queue: when the collector is slow or down the queue
/// fills and further spans are dropped and counted, never waited for. A task of its own sends
/// the queue every `scheduleDelay` (or sooner once a batch is full); a failed request's spans
/// are dropped and counted too.
///
/// `@unchecked Sendable`: `queue`, the counters, `wake`, `loop` and `isStopping` are guarded by `lock`.
public final class OTLPTraceExporter: @unchecked Sendable {
    public let configuration: OTLPConfiguration
    private let log: EventLog
    private let lock = NSLock()
    private var queue: [TraceSpan] = []
    private var droppedCount = 0
    private var exportedCount = 0
    private var failedRequestCount = 0
    private var wake: CheckedContinuation<Void, Never>?
    private var loop: Task<Void, Never>?
    private var isStopping = false

    /// An exporter; nothing is sent until `start()`.
    public init(configuration: OTLPConfiguration, log: EventLog = .silent) {
        self.configuration = configuration
        self.log = log
    }

    /// Spans dropped because the queue was full or their request failed.
    public var droppedSpans: Int { lock.withLock { droppedCount } }
    /// Spans the collector accepted.
    public var exportedSpans: Int { lock.withLock { exportedCount } }
    /// Requests that failed (collector down, slow or refusing).
    public var failedRequests: Int { lock.withLock { failedRequestCount } }

    /// The exporter's counters in Prometheus' text format, for `/metrics`.
    public var prometheusText: String {
        let (exported, dropped, failed) = lock.withLock { (exportedCount, droppedCount, failedRequestCount) }
        return """
            # HELP parley_trace_spans_exported_total Spans the OTLP collector accepted.
            # TYPE parley_trace_spans_exported_total counter
            parley_trace_spans_exported_total \(exported)
            # HELP parley_trace_spans_dropped_total Spans dropped: the queue was full or the collector failed.
            # TYPE parley_trace_spans_dropped_total counter
            parley_trace_spans_dropped_total \(dropped)
            # HELP parley_trace_export_failures_total OTLP export requests that failed.
            # TYPE parley_trace_export_failures_total counter
            parley_trace_export_failures_total \(failed)

            """
    }

    /// Queues a finished span; drops it (counted) when the queue is full. Never blocks.
    public func submit(_ span: TraceSpan) {
        let wakes: CheckedContinuation<Void, Never>? = lock.withLock {
            guard queue.count < configuration.maxQueueSize else {
                droppedCount += 1
                return nil
            }
            queue.append(span)
            guard queue.count >= configuration.maxExportBatchSize else { return nil }
            defer { wake = nil }
            return wake
        }
        wakes?.resume()
    }

    /// Starts sending.
    public func start() {
        lock.withLock {
            guard loop == nil else { return }
            loop = Task.detached(priority: .utility) { [self] in await run() }
        }
    }

    /// Sends what is queued, then stops.
    public func shutdown() async {
        let running = lock.withLock { () -> Task<Void, Never>? in
            isStopping = true
            defer { loop = nil }
            return loop
        }
        running?.cancel()
        releaseWake()
        await running?.value
        await exportQueued()
    }

    private func run() async {
        while !lock.withLock({ isStopping }) {
            await waitForBatchOrDelay()
            guard !lock.withLock({ isStopping }) else { return }
            await exportQueued()
        }
    }

    /// Returns after `scheduleDelay`, as soon as a full batch is queued, or at shutdown.
    private func waitForBatchOrDelay() async {
        let delay = configuration.scheduleDelay
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = lock.withLock {
                if queue.count >= configuration.maxExportBatchSize || isStopping { return true }
                wake = continuation
                return false
            }
            if ready {
                continuation.resume()
                return
            }
            // Whoever takes `wake` first (this timer, a full batch, shutdown) resumes it.
            Task { [self] in
                try? await Task.sleep(for: delay)
                releaseWake()
            }
        }
    }

    private func releaseWake() {
        lock.withLock { () -> CheckedContinuation<Void, Never>? in
            defer { wake = nil }
            return wake
        }?.resume()
    }

    /// Sends everything queued, a batch per request.
    func exportQueued() async {
        while true {
            let batch: [TraceSpan] = lock.withLock {
                let batch = Array(queue.prefix(configuration.maxExportBatchSize))
                queue.removeFirst(batch.count)
                return batch
            }
            guard !batch.isEmpty else { return }
            await export(batch)
        }
    }

    private func export(_ batch: [TraceSpan]) async {
        var headers = configuration.headers
        headers["Content-Type"] = "application/json"
        let request = HTTPClient.Request(
            url: configuration.endpoint, method: "POST", headers: headers,
            body: Data(Self.requestBody(batch, serviceName: configuration.serviceName).jsonText.utf8), idleTimeout: configuration.timeout
        )
        let status = (try? await HTTPClient.shared.send(request, maxBodyBytes: 64 << 10))?.status
        let accepted = status.map { (200..<300).contains($0) } ?? false
        lock.withLock {
            if accepted {
                exportedCount += batch.count
            } else {
                droppedCount += batch.count
                failedRequestCount += 1
            }
        }
        if !accepted {
            log.log("traces.export_failed", ["spans": .number(Double(batch.count)), "status": .number(Double(status ?? 0))])
        }
    }

    /// An `ExportTraceServiceRequest` in OTLP/JSON holding `spans` of one service.
    static func requestBody(_ spans: [TraceSpan], serviceName: String) -> JSONValue {
        .object(["resourceSpans": .array([.object([
            "resource": .object(["attributes": TraceSpan.otlpAttributes(["service.name": .string(serviceName)])]),
            "scopeSpans": .array([.object([
                "scope": .object(["name": .string("parley")]),
                "spans": .array(spans.map(\.otlpJSON)),
            ])]),
        ])])])
    }
}
