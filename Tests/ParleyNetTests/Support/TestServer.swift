import Foundation
import ParleyNet
#if canImport(FoundationNetworking)
import FoundationNetworking
import ParleyTesting
#endif

/// Starts a server on port 0 for a test and shuts it down after `body`.
func withServer<T>(
    _ configuration: HTTPServer.Configuration = HTTPServer.Configuration(),
    router: Router,
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    let server = HTTPServer(configuration: configuration, router: router)
    try server.start()
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// Sends one request with URLSession and returns the status, headers and body.
func fetch(
    _ method: String = "GET", port: Int, path: String, body: Data? = nil, headers: [String: String] = [:]
) async throws -> (status: Int, headers: [AnyHashable: Any], body: Data) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
    request.httpMethod = method
    request.httpBody = body
    request.timeoutInterval = 30
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as! HTTPURLResponse
    return (http.statusCode, http.allHeaderFields, data)
}

/// Awaits `operation`, failing with `TimeoutError` after `seconds`.
func withDeadline<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: TestDeadline.seconds(seconds))
            throw TimeoutError(seconds: seconds)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// A deadline passed.
struct TimeoutError: Error {
    let seconds: Double
}
