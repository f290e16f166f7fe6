import Foundation
import Testing
@testable import ParleyNet
import ParleyTesting

/// Requests with an outbound policy against real servers on loopback: refused addresses are
/// never connected to, names go to their checked address, and redirects stay on the checked host.
@Suite struct HTTPClientOutboundPolicyTests {
    static let loopback = OutboundPolicy(allowing: [try! IPAddressRange("127.0.0.0/8"), try! IPAddressRange("::1")])

    static func refusal(of request: HTTPClient.Request, client: HTTPClient = HTTPClient()) async -> HTTPClientError? {
        do {
            _ = try await httpClientTestDeadline { try await client.send(request) }
            return nil
        } catch {
            return error as? HTTPClientError
        }
    }

    @Test func refusedAddressesAreNeverConnectedTo() async throws {
        let server = try RawHTTPServer()
        let fenced = OutboundPolicy()
        let expectations: [(String, String)] = [
            ("http://127.0.0.1:\(server.port)/path", "127.0.0.1 is a loopback address"),
            ("https://127.0.0.1:\(server.port)/path", "127.0.0.1 is a loopback address"),
            ("http://[::ffff:127.0.0.1]:\(server.port)/path", "::ffff:127.0.0.1 is a loopback address"),
            ("http://10.0.0.1/", "10.0.0.1 is a private address"),
            ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
            ("http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud metadata address"),
        ]
        for (url, message) in expectations {
            let error = await Self.refusal(of: HTTPClient.Request(url: URL(string: url)!, outboundPolicy: fenced))
            #expect(error?.kind == .addressRefused, "\(url): \(String(describing: error))")
            #expect(error?.message == message)
        }
        let named = await Self.refusal(of: HTTPClient.Request(url: URL(string: "http://localhost:\(server.port)/path")!, outboundPolicy: fenced))
        #expect(named?.kind == .addressRefused)
        #expect(named?.message.hasPrefix("localhost resolves to ") == true, "\(String(describing: named))")

        // The first connection the server ever accepts carries the allowed request: none of the
        // refused ones reached it (a connection waiting in the backlog would come first).
        let first = RequestBox()
        server.serveOne { connection in
            first.set(connection.readRequest())
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        }
        let allowed = HTTPClient.Request(url: server.url, headers: ["X-Attempt": "allowed"], outboundPolicy: Self.loopback)
        let response = try await httpClientTestDeadline { try await HTTPClient().send(allowed) }
        #expect(response.status == 200)
        #expect(first.value?.0.lowercased().contains("x-attempt: allowed") == true, "\(String(describing: first.value?.0))")
    }

    @Test func aNameGoesToItsCheckedAddressAndKeepsItsHostHeader() async throws {
        // The server listens on 127.0.0.1 only: when localhost resolves to ::1 first, that
        // address refuses the connection and the next checked one takes the request.
        let server = try RawHTTPServer()
        let received = RequestBox()
        server.serveOne { connection in
            received.set(connection.readRequest())
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        }
        let request = HTTPClient.Request(url: URL(string: "http://localhost:\(server.port)/path")!, outboundPolicy: Self.loopback)
        let response = try await httpClientTestDeadline { try await HTTPClient().send(request) }
        #expect(response.body == Data("hello".utf8))
        #expect(received.value?.0.components(separatedBy: "\r\n").contains("Host: localhost:\(server.port)") == true, "\(String(describing: received.value?.0))")
    }

    @Test func anAddressThatRefusesTheConnectionPassesTheRequestToTheNext() async throws {
        // What `localhost` with both ::1 and 127.0.0.1 gives, wherever it resolves to one only.
        let server = try RawHTTPServer()
        let closed = try ClosedPort()
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        }
        let request = HTTPClient.Request(url: server.url, outboundPolicy: Self.loopback)
        let body = try await httpClientTestDeadline {
            try await HTTPClient().sendToFirstReachable(request, [IPAddress("::1")!, IPAddress("127.0.0.1")!]).collectBody(upTo: 100)
        }
        #expect(body == Data("ok".utf8))
        let nowhere = HTTPClient.Request(url: URL(string: "http://127.0.0.1:\(closed.port)/")!, outboundPolicy: Self.loopback)
        await #expect { _ = try await HTTPClient().sendToFirstReachable(nowhere, [IPAddress("::1")!, IPAddress("127.0.0.1")!]) } throws: {
            ($0 as? HTTPClientError)?.kind == .connectionFailed
        }
        withExtendedLifetime(closed) {}
    }

    @Test(arguments: ["http://localhost:{port}/next", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "https://example.invalid/"])
    func aRedirectToAnotherHostIsNotFollowed(location: String) async throws {
        let server = try RawHTTPServer()
        let target = location.replacingOccurrences(of: "{port}", with: "\(server.port)")
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 302 Found\r\nLocation: \(target)\r\nContent-Length: 0\r\n\r\n")
        }
        let error = await Self.refusal(of: HTTPClient.Request(url: server.url, outboundPolicy: Self.loopback))
        #expect(error?.kind == .redirectRefused, "\(String(describing: error))")
        #expect(error?.message == "127.0.0.1 redirected to another host, which is not followed")
    }

    @Test func aRedirectOnTheCheckedHostIsFollowed() async throws {
        let server = try RawHTTPServer()
        let second = RequestBox()
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:\(server.port)/moved\r\nContent-Length: 0\r\n\r\n")
            second.set(connection.readRequest())
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone")
        }
        let request = HTTPClient.Request(url: server.url, method: "POST", body: Data("{}".utf8), outboundPolicy: Self.loopback)
        let response = try await httpClientTestDeadline { try await HTTPClient().send(request) }
        #expect(response.body == Data("done".utf8))
        #expect(second.value?.0.hasPrefix("POST /moved HTTP/1.1") == true)
    }
}

extension TLSServerTests {
    /// Fenced `https://` requests, which run on libwebsockets with TLS of Parley's own.
    @Suite struct HTTPClientOverTLSTests {
        @Test func httpsRunsOnTheCheckedAddressWithTheCertificateChecked() async throws {
            let certificate = try await SelfSignedCertificate.make()
            defer { certificate.remove() }
            var configuration = HTTPServer.Configuration()
            configuration.tls = certificate.tls
            var router = Router()
            router.get("/hello") { request in .text("hello \(request.headers["host"] ?? "-")") }
            router.post("/echo") { request in HTTPResponse(status: 200, body: .data(request.body)) }
            let loopback = HTTPClientOutboundPolicyTests.loopback
            try await withServer(configuration, router: router) { server in
                let trusting = HTTPClient(additionalTrustedCertificates: certificate.certificatePath)
                for host in ["localhost", "127.0.0.1"] {
                    let hello = HTTPClient.Request(url: URL(string: "https://\(host):\(server.port)/hello")!, outboundPolicy: loopback)
                    let response = try await httpClientTestDeadline { try await trusting.send(hello) }
                    #expect(response.status == 200)
                    #expect(String(decoding: response.body, as: UTF8.self) == "hello \(host):\(server.port)")
                }
                // A large body both ways, on the kept connection.
                let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
                let echo = HTTPClient.Request(
                    url: URL(string: "https://localhost:\(server.port)/echo")!, method: "POST", body: payload, outboundPolicy: loopback
                )
                let echoed = try await httpClientTestDeadline { try await trusting.send(echo) }
                #expect(echoed.body == payload)

                // The system's authorities alone do not trust the test's certificate.
                let hello = URL(string: "https://127.0.0.1:\(server.port)/hello")!
                let untrusted = await HTTPClientOutboundPolicyTests.refusal(of: HTTPClient.Request(url: hello, outboundPolicy: loopback))
                #expect(untrusted?.kind == .connectionFailed)
                #expect(untrusted?.message.contains("the TLS certificate of 127.0.0.1 was refused") == true, "\(String(describing: untrusted))")
                // Nor does a policy without the allow-list reach it.
                let fenced = await HTTPClientOutboundPolicyTests.refusal(of: HTTPClient.Request(url: hello, outboundPolicy: OutboundPolicy()), client: trusting)
                #expect(fenced?.kind == .addressRefused)
            }
        }
    }
}
