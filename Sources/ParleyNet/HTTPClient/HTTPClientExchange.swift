import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request in flight: the URLSession task, the caller waiting for the head and the body stream.
///
/// Touched from the caller's task (start, cancel) and from the session's delegate queue.
final class HTTPClientExchange: @unchecked Sendable {  // `lock` guards `head`, `started`, `cancelled`.
    let task: URLSessionDataTask
    let body: AsyncThrowingStream<Data, any Error>.Continuation
    private let lock = NSLock()
    private var head: CheckedContinuation<HTTPURLResponse, any Error>?
    private var started = false
    private var cancelled = false

    init(task: URLSessionDataTask, body: AsyncThrowingStream<Data, any Error>.Continuation) {
        self.task = task
        self.body = body
    }

    /// Registers with the delegate and starts the transfer, unless the caller already cancelled.
    func start(delegate: HTTPClientSessionDelegate, head continuation: CheckedContinuation<HTTPURLResponse, any Error>) {
        lock.lock()
        if cancelled {
            lock.unlock()
            continuation.resume(throwing: CancellationError())
            body.finish(throwing: CancellationError())
            return
        }
        head = continuation
        started = true
        delegate.register(self)
        task.resume()
        lock.unlock()
    }

    /// Cancels the transfer; the delegate then reports the end.
    func cancel() {
        lock.lock()
        cancelled = true
        let cancelTask = started
        lock.unlock()
        if cancelTask { task.cancel() }
    }

    /// The head arrived.
    func receive(_ response: HTTPURLResponse) {
        takeHead()?.resume(returning: response)
    }

    /// The transfer ended, with `error` when it failed.
    func complete(with error: (any Error)?) {
        let pendingHead = takeHead()
        guard let error else {
            if let pendingHead {
                pendingHead.resume(throwing: HTTPClientError(.connectionLost, message: "the server sent no response"))
            }
            body.finish()
            return
        }
        let failure: any Error = HTTPClientError.classifying(error) ?? CancellationError()
        pendingHead?.resume(throwing: failure)
        body.finish(throwing: failure)
    }

    private func takeHead() -> CheckedContinuation<HTTPURLResponse, any Error>? {
        lock.lock()
        defer { lock.unlock() }
        let pending = head
        head = nil
        return pending
    }
}

/// Routes URLSession's callbacks to the exchange of each task.
final class HTTPClientSessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // `lock` guards `exchanges`.
    private let lock = NSLock()
    private var exchanges: [Int: HTTPClientExchange] = [:]

    func register(_ exchange: HTTPClientExchange) {
        lock.lock()
        exchanges[exchange.task.taskIdentifier] = exchange
        lock.unlock()
    }

    private func exchange(for task: URLSessionTask, removing: Bool = false) -> HTTPClientExchange? {
        lock.lock()
        defer { lock.unlock() }
        return removing ? exchanges.removeValue(forKey: task.taskIdentifier) : exchanges[task.taskIdentifier]
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let exchange = exchange(for: dataTask) else {
            completionHandler(.cancel)
            return
        }
        guard let httpResponse = response as? HTTPURLResponse else {
            completionHandler(.cancel)
            return
        }
        exchange.receive(httpResponse)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(for: dataTask)?.body.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchange(for: task, removing: true)?.complete(with: error)
    }
}
