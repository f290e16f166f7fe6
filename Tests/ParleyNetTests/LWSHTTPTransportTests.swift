import Foundation
import Testing
@testable import ParleyNet

/// Keep-alive, retries on a connection the server dropped, and the idle timeout of the
/// libwebsockets transport behind `HTTPClient`'s `http://` requests.
@Suite struct LWSHTTPTransportTests {
    @Test func consecutiveRequestsShareOneConnection() async throws {
        let server = try RawHTTPServer()
        // Only one connection is ever accepted: a second one would leave its request unanswered.
        server.serveOne { connection in
            for answer in ["first", "second"] {
                _ = connection.readRequest()
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(answer.utf8.count)\r\n\r\n\(answer)")
            }
        }
        let client = HTTPClient()
        let bodies = try await httpClientTestDeadline {
            var bodies: [String] = []
            for _ in 0..<2 {
                let response = try await client.send(HTTPClient.Request(url: server.url, method: "POST", body: Data("{}".utf8)))
                bodies.append(String(decoding: response.body, as: UTF8.self))
            }
            return bodies
        }
        #expect(bodies == ["first", "second"])
    }

    @Test func aRequestMeetingAClosedKeptConnectionGoesOutOnAFreshOne() async throws {
        let server = try RawHTTPServer()
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
            // The next request arrives as the server gives up on the connection: no answer.
            _ = connection.readRequest()
        }
        let client = HTTPClient()
        let first = try await httpClientTestDeadline { try await client.send(HTTPClient.Request(url: server.url)) }
        #expect(first.body == Data("first".utf8))
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond")
        }
        let second = try await httpClientTestDeadline { try await client.send(HTTPClient.Request(url: server.url)) }
        #expect(second.body == Data("second".utf8))
    }

    @Test func aStalledBodyTimesOut() async throws {
        let server = try RawHTTPServer()
        let done = HTTPClientTestSignal()
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk("start"))
            _ = done.block(seconds: 30)
        }
        let client = HTTPClient()
        let error = try await httpClientTestDeadline { () -> HTTPClientError? in
            defer { done.fire() }
            let response = try await client.stream(HTTPClient.Request(url: server.url, idleTimeout: .milliseconds(200)))
            do {
                for try await _ in response.body {}
                return nil
            } catch let error as HTTPClientError {
                return error
            }
        }
        #expect(error?.kind == .timedOut)
    }

    @Test func headersThatWouldSplitTheRequestAreRefused() async throws {
        let client = HTTPClient()
        for request in [
            HTTPClient.Request(url: URL(string: "http://127.0.0.1:9/")!, headers: ["X-Evil": "a\r\nInjected: yes"]),
            HTTPClient.Request(url: URL(string: "http://127.0.0.1:9/")!, headers: ["Bad Name": "x"]),
            HTTPClient.Request(url: URL(string: "http://127.0.0.1:9/")!, method: "GET /other"),
        ] {
            await #expect { () async throws -> Void in
                _ = try await client.send(request)
            } throws: { error in
                (error as? HTTPClientError)?.kind == .invalidRequest
            }
        }
    }
}

/// Redirects of `http://` requests, which the libwebsockets transport follows itself.
@Suite struct LWSHTTPRedirectTests {
    @Test func aTemporaryRedirectRepeatsTheMethodAndBody() async throws {
        let server = try RawHTTPServer()
        let second = RequestBox()
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 307 Temporary Redirect\r\nLocation: /moved?x=1\r\nContent-Length: 0\r\n\r\n")
            second.set(connection.readRequest())
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone")
        }
        let client = HTTPClient()
        let response = try await httpClientTestDeadline {
            try await client.send(HTTPClient.Request(url: server.url, method: "POST", headers: ["Authorization": "Bearer k"], body: Data("{}".utf8)))
        }
        #expect(response.status == 200)
        #expect(response.body == Data("done".utf8))
        let (head, body) = try #require(second.value)
        #expect(head.hasPrefix("POST /moved?x=1 HTTP/1.1"))
        #expect(head.lowercased().contains("authorization: bearer k"))
        #expect(body == Data("{}".utf8))
    }

    @Test func seeOtherBecomesAGetAndCredentialsStayWithTheirOrigin() throws {
        let request = HTTPClient.Request(
            url: URL(string: "http://a.example/x")!, method: "POST",
            headers: ["Authorization": "Bearer k", "Content-Type": "application/json"], body: Data("{}".utf8)
        )
        let sameHost = try #require(request.redirected(status: 303, location: "/y"))
        #expect(sameHost.method == "GET" && sameHost.body == nil && sameHost.headers == ["Authorization": "Bearer k"])
        #expect(sameHost.url.absoluteString == "http://a.example/y")
        let otherHost = try #require(request.redirected(status: 308, location: "https://b.example/z"))
        #expect(otherHost.method == "POST" && otherHost.body == Data("{}".utf8) && otherHost.headers == ["Content-Type": "application/json"])
        #expect(request.redirected(status: 200, location: "/y") == nil)
        #expect(request.redirected(status: 302, location: "ftp://c.example/") == nil)
        #expect(request.redirected(status: 302, location: nil) == nil)
    }
}
