import Foundation
import ParleyNet
import Testing

@Suite("Static files")
struct StaticFilesTests {
    /// A web root with one file per served type, a sub-folder, and a secret next to the root.
    struct Site {
        let base: URL
        var root: URL { base.appendingPathComponent("web") }

        static func make() throws -> Site {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("parley-static-\(UUID().uuidString)")
            let site = Site(base: base)
            let manager = FileManager.default
            try manager.createDirectory(at: site.root.appendingPathComponent("sub"), withIntermediateDirectories: true)
            let files: [String: String] = [
                "index.html": "<h1>home</h1>", "app.js": "console.log(1)", "style.css": "body{}",
                "data.json": "{}", "icon.svg": "<svg/>", "image.png": "PNG", "sound.wav": "RIFF",
                "module.wasm": "\0asm", "sub/index.html": "<h1>sub</h1>",
            ]
            for (name, content) in files {
                try Data(content.utf8).write(to: site.root.appendingPathComponent(name))
            }
            try Data("TOP SECRET".utf8).write(to: base.appendingPathComponent("secret.txt"))
            try manager.createSymbolicLink(
                at: site.root.appendingPathComponent("escape.txt"), withDestinationURL: base.appendingPathComponent("secret.txt"))
            return site
        }

        func remove() {
            try? FileManager.default.removeItem(at: base)
        }
    }

    static func router() -> Router {
        var router = Router()
        router.get("/api/ping") { _ in .text("pong") }
        return router
    }

    @Test func servesFilesWithTheirContentTypes() async throws {
        let site = try Site.make()
        defer { site.remove() }
        try await withServer(HTTPServer.Configuration(staticRoot: site.root), router: Self.router()) { server in
            let expected: [(String, String, String)] = [
                ("/", "text/html; charset=utf-8", "<h1>home</h1>"),
                ("/index.html", "text/html; charset=utf-8", "<h1>home</h1>"),
                ("/app.js", "text/javascript; charset=utf-8", "console.log(1)"),
                ("/style.css", "text/css; charset=utf-8", "body{}"),
                ("/data.json", "application/json", "{}"),
                ("/icon.svg", "image/svg+xml", "<svg/>"),
                ("/image.png", "image/png", "PNG"),
                ("/sound.wav", "audio/wav", "RIFF"),
                ("/module.wasm", "application/wasm", "\0asm"),
                ("/sub/", "text/html; charset=utf-8", "<h1>sub</h1>"),
                ("/sub", "text/html; charset=utf-8", "<h1>sub</h1>"),
            ]
            // A connection per request: on a busy machine the test's task can wait longer
            // between two requests than the server keeps an idle connection open (15 s).
            for (path, contentType, body) in expected {
                let socket = try RawSocket(port: server.port)
                try await socket.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try await socket.receiveResponse()
                #expect(response.status == 200, "\(path)")
                #expect(response.header("content-type") == contentType, "\(path)")
                #expect(response.text == body, "\(path)")
            }
            // Routes still win, and HEAD sends the length without the body.
            #expect(String(decoding: try await fetch(port: server.port, path: "/api/ping").body, as: UTF8.self) == "pong")
            let socket = try RawSocket(port: server.port)
            try await socket.send("HEAD /app.js HTTP/1.1\r\nHost: x\r\n\r\nGET /data.json HTTP/1.1\r\nHost: x\r\n\r\n")
            // Both answers may arrive in one read: the HEAD head, then the GET with its body.
            let both = String(decoding: try await socket.receive(until: "\r\n\r\n{}"), as: UTF8.self)
            let responses = both.components(separatedBy: "HTTP/1.1 ").filter { !$0.isEmpty }
            #expect(responses.count == 2)
            #expect(responses.first?.contains("Content-Length: 14\r\n") == true)
            #expect(responses.first?.hasSuffix("\r\n\r\n") == true)
            #expect(responses.last?.hasPrefix("200 OK") == true)
            #expect(try await fetch(port: server.port, path: "/missing.js").status == 404)
        }
    }

    @Test(arguments: [
        "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/sub/../../secret.txt",
        "/sub/%2e%2e%2f%2e%2e%2fsecret.txt", "/..%2fsecret.txt", "/%2f..%2f..%2fsecret.txt",
        "//etc/passwd", "/%2fetc%2fpasswd", "/escape.txt", "/sub/..\\..\\secret.txt", "/....//secret.txt",
        "/%252e%252e/secret.txt", "/%00/secret.txt",
    ])
    func refusesTraversal(path: String) async throws {
        let site = try Site.make()
        defer { site.remove() }
        try await withServer(HTTPServer.Configuration(staticRoot: site.root), router: Self.router()) { server in
            let socket = try RawSocket(port: server.port)
            try await socket.send("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let reply = String(decoding: try await socket.receiveUntilClosed(), as: UTF8.self)
            #expect(!reply.contains("TOP SECRET"))
            #expect(!reply.contains("root:"))
            #expect(!reply.hasPrefix("HTTP/1.1 200"))
            // And the server is still serving.
            #expect(try await fetch(port: server.port, path: "/").status == 200)
        }
    }
}
