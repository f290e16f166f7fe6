import Foundation
import ParleyCore
import ParleyNet
@testable import ParleyServer
import ParleyTesting
import Testing

/// Call control the OpenAI way: a ringing SIP call is announced to the backend with a signed
/// `realtime.call.incoming` webhook, and answered or refused by `/v1/realtime/calls/{id}/…`.
@Suite(.serialized) struct SIPCallControlTests {
    static let secret = "whsec_" + Data("parley-webhook-secret-0123456789".utf8).base64EncodedString()

    /// A backend that takes call webhooks (on a real socket) and hands them to the test.
    static func backend() throws -> (server: HTTPServer, webhooks: AsyncStream<HTTPRequest>) {
        let (webhooks, continuation) = AsyncStream.makeStream(of: HTTPRequest.self)
        var router = Router()
        router.post("/calls") { request in
            continuation.yield(request)
            return .text("ok")
        }
        var configuration = HTTPServer.Configuration(port: 0)
        configuration.additionalRequestHeaders += ["webhook-id", "webhook-timestamp", "webhook-signature"]
        let server = HTTPServer(configuration: configuration, router: router)
        try server.start()
        return (server, webhooks)
    }

    static func parley(backend: HTTPServer) throws -> SIPTestServer {
        try SIPTestServer.start { settings in
            settings.sip.webhookURL = URL(string: "http://127.0.0.1:\(backend.port)/calls")
            settings.sip.webhookSecret = secret
        }
    }

    /// The next webhook, checked against its Standard Webhooks signature; its event.
    static func nextEvent(_ webhooks: AsyncStream<HTTPRequest>) async throws -> JSONValue {
        let request = try #require(await webhooks.first { _ in true })
        let id = try #require(request.headers["webhook-id"])
        let timestamp = try #require(request.headers["webhook-timestamp"])
        let key = Data(base64Encoded: String(secret.dropFirst(6)))!
        let expected = "v1," + HMACSHA256.authenticationCode(for: Data("\(id).\(timestamp).".utf8) + request.body, key: key).base64EncodedString()
        #expect(request.headers["webhook-signature"] == expected)
        return try JSONValue(parsing: String(decoding: request.body, as: UTF8.self))
    }

    @Test func theBackendAcceptsAnAnnouncedCallThenHangsItUp() async throws {
        let (backend, webhooks) = try Self.backend()
        let parley = try Self.parley(backend: backend)
        let caller = Task {
            try await SIPp.run(SIPp.scenario(
                SIPp.answeredInvite(sdp: SIPCallTests.pcmuOffer, headers: ["X-Customer-Id: 42", "X-Campaign: spring sale"]),
                #"<recv request="BYE"/>"#,
                """
                  <send>
                    <![CDATA[
                      SIP/2.0 200 OK
                      [last_Via:]
                      [last_From:]
                      [last_To:]
                      [last_Call-ID:]
                      [last_CSeq:]
                      Content-Length: 0

                    ]]>
                  </send>
                """
            ), port: parley.sipPort)
        }
        let event = try await Self.nextEvent(webhooks)
        #expect(event["type"]?.stringValue == "realtime.call.incoming")
        let callID = try #require(event["data"]?["call_id"]?.stringValue)
        guard case .array(let headers)? = event["data"]?["sip_headers"] else { throw CancellationError() }
        #expect(headers.contains { $0["name"]?.stringValue == "To" && $0["value"]?.stringValue?.contains("+14155550123") == true }, "\(event)")
        let custom = headers.compactMap { header in header["name"]?.stringValue.flatMap { $0.hasPrefix("X-") ? "\($0): \(header["value"]?.stringValue ?? "")" : nil } }
        #expect(custom == ["X-Customer-Id: 42", "X-Campaign: spring sale"], "\(event)")
        let accepted = try await parley.server.request("POST", "/v1/realtime/calls/\(callID)/accept", json: #"{"instructions":"Be brief."}"#)
        #expect(accepted.status == 200, "\(accepted.body)")
        let started = try #require(await parley.logs.first("sip.call_started"))
        #expect(started["call_id"]?.stringValue == callID)
        let hungUp = try await parley.server.request("POST", "/v1/realtime/calls/\(callID)/hangup")
        #expect(hungUp.status == 200, "\(hungUp.body)")
        let result = try await caller.value
        #expect(result.status == 0, "\(result.output)")
        #expect(await parley.logs.first("sip.call_ended") != nil)
        #expect(try await parley.server.request("POST", "/v1/realtime/calls/\(callID)/hangup").status == 404, "an ended call is gone")
        await parley.stop()
        await backend.shutdown()
    }

    @Test func theBackendRejectsAnAnnouncedCallWithItsStatus() async throws {
        let (backend, webhooks) = try Self.backend()
        let parley = try Self.parley(backend: backend)
        // More custom headers than are passed on, one of them long: the webhook carries the first 20, cut to 512 characters.
        let manyHeaders = (1...25).map { "X-Tag-\($0): \($0 == 1 ? String(repeating: "v", count: 2_000) : "\($0)")" }
        let caller = Task {
            try await SIPp.run(SIPp.scenario(
                SIPp.invite(sdp: SIPCallTests.pcmuOffer, headers: manyHeaders),
                #"<recv response="100" optional="true"/>"#,
                #"<recv response="180" optional="true"/>"#,
                #"<recv response="486"/>"#,
                SIPp.failureACK()
            ), port: parley.sipPort)
        }
        let event = try await Self.nextEvent(webhooks)
        let callID = try #require(event["data"]?["call_id"]?.stringValue)
        guard case .array(let headers)? = event["data"]?["sip_headers"] else { throw CancellationError() }
        let custom = headers.filter { $0["name"]?.stringValue?.hasPrefix("X-") == true }
        #expect(custom.count == 20 && custom.first?["value"]?.stringValue?.count == 512, "\(custom.count)")
        let client = try await parley.server.request("POST", "/v1/realtime/calls/\(callID)/reject", json: #"{"status_code":486}"#, token: parley.server.clientToken())
        #expect(client.status == 403, "only the backend decides")
        let rejected = try await parley.server.request("POST", "/v1/realtime/calls/\(callID)/reject", json: #"{"status_code":486}"#)
        #expect(rejected.status == 200, "\(rejected.body)")
        let result = try await caller.value
        #expect(result.status == 0, "\(result.output)")
        #expect(parley.server.app.context.sessions.count == 0)
        await parley.stop()
        await backend.shutdown()
    }
}
