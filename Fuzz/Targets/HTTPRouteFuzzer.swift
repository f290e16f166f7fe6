import Foundation
@testable import ParleyNet

/// The Parley server's route table (Sources/ParleyServer), with handlers that do nothing.
private let router: Router = {
    var router = Router()
    let ignore: HTTPHandler = { _ in .text("") }
    for (method, pattern) in [
        ("GET", "/healthz"), ("GET", "/metrics"), ("POST", "/v1/tokens"), ("POST", "/v1/realtime/client_secrets"),
        ("POST", "/v1/local/token"), ("POST", "/v1/agents"), ("GET", "/v1/agents"), ("GET", "/v1/agents/{id}"),
        ("PATCH", "/v1/agents/{id}"), ("DELETE", "/v1/agents/{id}"), ("POST", "/v1/agents/{id}/instances"),
        ("GET", "/v1/instances/{id}"), ("POST", "/v1/instances/{id}/interrupt"), ("DELETE", "/v1/instances/{id}"),
        ("GET", "/v1/conversations/{id}/items"),
    ] {
        router.add(method, pattern, ignore)
    }
    router.webSocket("/v1/realtime", WebSocketRoute(decide: { _ in .accept(subprotocol: nil) }, onConnection: { _, _ in }))
    return router
}()

/// A static root with a file, a folder, and symlinks that point outside it.
private let staticFiles: StaticFiles = {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("parley-fuzz-static-\(getpid())")
    try? FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
    try? Data("<p>index</p>".utf8).write(to: root.appendingPathComponent("index.html"))
    try? Data("let a = 1".utf8).write(to: root.appendingPathComponent("sub/app.js"))
    try? FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("etc").path, withDestinationPath: "/etc")
    try? FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("passwd").path, withDestinationPath: "/etc/passwd")
    return StaticFiles(root: root)
}()

private let methods = ["GET", "POST", "PATCH", "DELETE", "HEAD", "PUT", "OPTIONS"]

/// libFuzzer entry: routes the input (first byte: method; rest: the decoded request path) the
/// way the server does. Path parameters must be single non-empty segments, and a static file
/// must resolve inside the static root, never through `..` or a symlink out of it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRoute(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let input = UnsafeBufferPointer(start: bytes, count: count)
    let method = methods[Int(input[0]) % methods.count]
    let path = String(decoding: input.dropFirst(), as: UTF8.self)
    if case .handler(_, let parameters) = router.match(method: method, path: path) {
        checkParameters(parameters)
    }
    if let (_, parameters) = router.matchWebSocket(path: path) { checkParameters(parameters) }
    if let file = staticFiles.resolve(path) {
        let root = staticFiles.root.path
        fuzzCheck(file.path.hasPrefix(root + "/"), "static path \(path.debugDescription) resolved outside the root: \(file.path)")
    }
    return 0
}

private func checkParameters(_ parameters: [String: String]) {
    for value in parameters.values {
        fuzzCheck(!value.isEmpty && !value.contains("/"), "a path parameter spans segments: \(value.debugDescription)")
    }
}
