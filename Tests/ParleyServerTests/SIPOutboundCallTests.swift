import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// Calls Parley places (`POST /v1/calls`) through a trunk, against SIP implementations nobody
/// here wrote: baresip answers on its own (auto-answer) and hears the agent; SIPp answers busy,
/// or lets it ring. The server has the deterministic providers: whatever the callee says is
/// "hello there", and the answer is "Hello from Parley.".
@Suite(.serialized) struct SIPOutboundCallTests {
    /// A server whose outbound trunk is the phone on `phonePort`, and the id of an agent to call with.
    static func parley(phonePort: Int) async throws -> (parley: SIPTestServer, agentID: String) {
        let parley = try SIPTestServer.start { $0.sip.outboundTrunk = "sip:127.0.0.1:\(phonePort)" }
        let agent = try await parley.server.request("POST", "/v1/agents", json: #"{"name":"Caller"}"#)
        #expect(agent.status == 201, "\(agent.body)")
        return (parley, try #require(agent.body["id"]?.stringValue))
    }

    /// The final line of the placed call `callID` (`sip.outbound_call_finished`).
    static func finished(_ parley: SIPTestServer, callID: String) async -> JSONValue? {
        _ = await parley.logs.first("sip.outbound_call_finished")
        return parley.logs.lines(of: "sip.outbound_call_finished").first { $0["call_id"]?.stringValue == callID }
    }

    @Test func aCallAnsweredByBaresipIsASessionOfTheAgentAndIsHeard() async throws {
        let phonePort = try BaresipPhone.freeSIPPort()
        let (parley, agentID) = try await Self.parley(phonePort: phonePort)
        let callee = try BaresipPhone(
            microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 6_000, seed: 5), user: "callee",
            listenPort: phonePort, autoAnswer: true
        )
        defer { callee.remove() }
        // baresip answers on its own and hangs up once the server has played the answer to its end.
        let answering = Task { try await callee.answer { await parley.logs.first("sip.reply_played") != nil } }
        let placed = try await parley.server.request(
            "POST", "/v1/calls", json: #"{"to":"sip:callee@127.0.0.1:\#(phonePort)","agent":"\#(agentID)"}"#
        )
        #expect(placed.status == 201, "\(placed.body)")
        #expect(placed.body["status"]?.stringValue == "dialing")
        let callID = try #require(placed.body["id"]?.stringValue)
        let output = try await answering.value
        let finished = try #require(await Self.finished(parley, callID: callID), "\(parley.logs.eventNames) \(output)")
        #expect(finished["status"]?.stringValue == "completed", "\(finished)")
        let record = try await parley.server.request("GET", "/v1/calls/\(callID)")
        #expect(record.status == 200 && record.body["status"]?.stringValue == "completed", "\(record.body)")
        #expect(record.body["answered_at"]?.numberValue != nil && record.body["agent"]?.stringValue == agentID, "\(record.body)")
        #expect((try callee.heard().map(abs).max() ?? 0) > 0.03, "baresip heard no answer: \(parley.logs.eventNames) \(output)")
        let started = try #require(parley.logs.lines(of: "sip.call_started").first)
        #expect(started["call_id"]?.stringValue == callID && started["agent"]?.stringValue == agentID, "\(started)")
        let items = try await parley.storedItems(ofCall: try #require(started["session"]?.stringValue))
        #expect(items.first == .user("hello there"), "\(items)")
        #expect(items.contains(.assistant(text: "Hello from Parley.", toolCalls: [], interrupted: false)), "\(items)")
        await parley.stop()
    }

    @Test func aBusyCalleeIsReportedBusy() async throws {
        let phonePort = try SIPp.freeUDPPort()
        let (parley, agentID) = try await Self.parley(phonePort: phonePort)
        let busy = Task {
            try await SIPp.serve(SIPp.scenario(
                #"<recv request="INVITE"/>"#,
                Self.reply(486, "Busy Here"),
                #"<recv request="ACK"/>"#
            ), port: phonePort)
        }
        let placed = try await parley.server.request("POST", "/v1/calls", json: #"{"to":"+15005550006","agent":"\#(agentID)"}"#)
        #expect(placed.status == 201, "\(placed.body)")
        let callID = try #require(placed.body["id"]?.stringValue)
        let result = try await busy.value
        #expect(result.status == 0, "\(result.output)")
        let finished = try #require(await Self.finished(parley, callID: callID))
        #expect(finished["status"]?.stringValue == "busy" && finished["sip_status"]?.numberValue == 486, "\(finished)")
        let record = try await parley.server.request("GET", "/v1/calls/\(callID)")
        #expect(record.body["status"]?.stringValue == "busy" && record.body["sip_status"]?.numberValue == 486, "\(record.body)")
        #expect(record.body["to"]?.stringValue == "+15005550006", "\(record.body)")
        #expect(record.body["uri"]?.stringValue == "sip:+15005550006@127.0.0.1:\(phonePort)", "\(record.body)")
        #expect(parley.server.app.context.sessions.count == 0)
        await parley.stop()
    }

    @Test func aCallNobodyAnswersIsCancelledAndReportedUnanswered() async throws {
        let phonePort = try SIPp.freeUDPPort()
        let (parley, agentID) = try await Self.parley(phonePort: phonePort)
        let ringing = Task { try await SIPp.serve(Self.ringsUntilCancelled, port: phonePort) }
        let placed = try await parley.server.request(
            "POST", "/v1/calls", json: #"{"to":"+15005550006","agent":"\#(agentID)","ring_timeout_seconds":2}"#
        )
        #expect(placed.status == 201, "\(placed.body)")
        let callID = try #require(placed.body["id"]?.stringValue)
        let result = try await ringing.value
        #expect(result.status == 0, "\(result.output)")
        let finished = try #require(await Self.finished(parley, callID: callID))
        #expect(finished["status"]?.stringValue == "no_answer", "\(finished)")
        await parley.stop()
    }

    @Test func theBackendHangsUpACallStillRingingAndItIsCancelled() async throws {
        let phonePort = try SIPp.freeUDPPort()
        let (parley, agentID) = try await Self.parley(phonePort: phonePort)
        let ringing = Task { try await SIPp.serve(Self.ringsUntilCancelled, port: phonePort) }
        let placed = try await parley.server.request("POST", "/v1/calls", json: #"{"to":"+15005550006","agent":"\#(agentID)"}"#)
        let callID = try #require(placed.body["id"]?.stringValue, "\(placed.body)")
        #expect(await parley.logs.first("sip.outbound_call_ringing") != nil)
        #expect(try await parley.server.request("GET", "/v1/calls/\(callID)").body["status"]?.stringValue == "ringing")
        // The backend hangs it up as any call, with the call control route: Parley cancels the INVITE.
        let hangUp = try await parley.server.request("POST", "/v1/realtime/calls/\(callID)/hangup")
        #expect(hangUp.status == 200, "\(hangUp.body)")
        let result = try await ringing.value
        #expect(result.status == 0, "\(result.output)")
        let finished = try #require(await Self.finished(parley, callID: callID))
        #expect(finished["status"]?.stringValue == "canceled", "\(finished)")
        await parley.stop()
    }

    @Test func aTrunkThatChallengesIsAnsweredWithItsCredentials() async throws {
        let phonePort = try SIPp.freeUDPPort()
        let parley = try SIPTestServer.start { settings in
            settings.sip.outboundTrunk = "sip:127.0.0.1:\(phonePort)"
            settings.sip.outboundCredentials = ("parley-trunk", "s3cret-outbound")
        }
        let agent = try await parley.server.request("POST", "/v1/agents", json: #"{"name":"Caller"}"#)
        let agentID = try #require(agent.body["id"]?.stringValue)
        // SIPp challenges the INVITE, checks the digest answer, and says busy only when it is right (403 otherwise).
        let trunk = Task {
            try await SIPp.serve(SIPp.scenario(
                #"<recv request="INVITE"/>"#,
                """
                  <send>
                    <![CDATA[
                      SIP/2.0 401 Unauthorized
                      [last_Via:]
                      [last_From:]
                      [last_To:];tag=[pid]SIPpTag01[call_number]
                      [last_Call-ID:]
                      [last_CSeq:]
                      WWW-Authenticate: Digest realm="trunk.example", nonce="a1b2c3d4e5", algorithm=MD5
                      Content-Length: 0

                    ]]>
                  </send>
                """,
                #"<recv request="ACK"/>"#,
                #"<recv request="INVITE"><action><verifyauth assign_to="authorized" username="parley-trunk" password="s3cret-outbound"/></action></recv>"#,
                #"<nop hide="true" test="authorized" next="authorized"/>"#,
                Self.reply(403, "Forbidden"),
                #"<recv request="ACK" next="done"/>"#,
                #"<label id="authorized"/>"#,
                Self.reply(486, "Busy Here"),
                #"<recv request="ACK"/>"#,
                #"<label id="done"/>"#
            ), port: phonePort)
        }
        let placed = try await parley.server.request("POST", "/v1/calls", json: #"{"to":"+15005550006","agent":"\#(agentID)"}"#)
        let callID = try #require(placed.body["id"]?.stringValue, "\(placed.body)")
        let result = try await trunk.value
        #expect(result.status == 0, "\(result.output)")
        let finished = try #require(await Self.finished(parley, callID: callID))
        #expect(finished["status"]?.stringValue == "busy", "the trunk did not take the credentials: \(finished)")
        await parley.stop()
    }

    /// A machine's answer: a three-second greeting, then its beep (1 kHz, 600 ms), then the line.
    static let machineGreeting = TelephoneAudio.lineNoise(milliseconds: 300) + TelephoneAudio.speech(milliseconds: 3_000)
        + TelephoneAudio.lineNoise(milliseconds: 400, seed: 3) + (0..<4_800).map { Int16(8_000 * sin(2 * Double.pi * 1_000 * Double($0) / 8_000)) }
        + TelephoneAudio.lineNoise(milliseconds: 8_000, seed: 9)

    /// Places a call with `detection` to a baresip that answers with `microphone`, hangs up when
    /// `hangUpWhen`; the call's record once it finished, and what baresip heard.
    static func detectedCall(
        detection: String, microphone: [Int16], hangUpWhen: @escaping @Sendable (SIPTestServer) async -> Bool
    ) async throws -> (record: JSONValue, heard: [Float], parley: SIPTestServer) {
        let phonePort = try BaresipPhone.freeSIPPort()
        let (parley, agentID) = try await Self.parley(phonePort: phonePort)
        let callee = try BaresipPhone(microphone: microphone, user: "callee", listenPort: phonePort, autoAnswer: true)
        defer { callee.remove() }
        let answering = Task { try await callee.answer { await hangUpWhen(parley) } }
        let placed = try await parley.server.request(
            "POST", "/v1/calls", json: #"{"to":"sip:callee@127.0.0.1:\#(phonePort)","agent":"\#(agentID)","machine_detection":\#(detection)}"#
        )
        let callID = try #require(placed.body["id"]?.stringValue, "\(placed.body)")
        let output = try await answering.value
        _ = try #require(await Self.finished(parley, callID: callID), "\(parley.logs.eventNames) \(output)")
        let record = try await parley.server.request("GET", "/v1/calls/\(callID)")
        return (record.body, try callee.heard(), parley)
    }

    @Test func aMachineGetsTheMessageAfterItsBeep() async throws {
        let (record, heard, parley) = try await Self.detectedCall(
            detection: #"{"action":"leave_message","message":"This is Parley calling about your order. Please call us back."}"#,
            microphone: Self.machineGreeting
        ) { parley in await parley.logs.first("sip.outbound_call_finished") != nil }
        #expect(record["answered_by"]?.stringValue == "machine" && record["message_left"] == .bool(true), "\(record)")
        #expect(record["status"]?.stringValue == "completed", "\(record)")
        // The message starts after the beep began (3.7 s into the answer), and no session took the call.
        let firstVoiced = try #require(heard.firstIndex { abs($0) > 0.03 }, "baresip heard no message")
        #expect(Double(firstVoiced) / 8_000 > 3.7, "the message began \(Double(firstVoiced) / 8_000) s into the call")
        #expect(parley.logs.lines(of: "sip.call_started").isEmpty)
        await parley.stop()
    }

    @Test func aMachineIsHungUpOn() async throws {
        let (record, _, parley) = try await Self.detectedCall(detection: #"{"action":"hang_up"}"#, microphone: Self.machineGreeting) { parley in
            await parley.logs.first("sip.outbound_call_finished") != nil
        }
        #expect(record["answered_by"]?.stringValue == "machine" && record["message_left"] == .bool(false), "\(record)")
        #expect(parley.logs.lines(of: "sip.call_started").isEmpty)
        await parley.stop()
    }

    @Test func aPersonGetsTheAgentWhichHeardTheirHello() async throws {
        let (record, heard, parley) = try await Self.detectedCall(
            detection: #"{"action":"hang_up"}"#, microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 6_000, seed: 5)
        ) { parley in await parley.logs.first("sip.reply_played") != nil }
        #expect(record["answered_by"]?.stringValue == "human" && record["status"]?.stringValue == "completed", "\(record)")
        #expect((heard.map(abs).max() ?? 0) > 0.03, "the person heard no answer")
        let started = try #require(parley.logs.lines(of: "sip.call_started").first)
        let items = try await parley.storedItems(ofCall: try #require(started["session"]?.stringValue))
        #expect(items.first == .user("hello there"), "\(items)")
        #expect(items.contains(.assistant(text: "Hello from Parley.", toolCalls: [], interrupted: false)), "\(items)")
        await parley.stop()
    }

    @Test func badRequestsGetClearErrors() async throws {
        let closed = try SIPTestServer.start()
        let unconfigured = try await closed.server.request("POST", "/v1/calls", json: #"{"to":"+15005550006","agent":"agt_x"}"#)
        #expect(unconfigured.status == 400 && unconfigured.body["error"]?["code"]?.stringValue == "sip_trunk_not_configured", "\(unconfigured.body)")
        await closed.stop()

        let (parley, agentID) = try await Self.parley(phonePort: try SIPp.freeUDPPort())
        let cases: [(body: String, status: Int, code: String)] = [
            ("not json", 400, "invalid_request"),
            (#"{"agent":"\#(agentID)"}"#, 400, "invalid_request"),
            (#"{"to":"tel:+15005550006","agent":"\#(agentID)"}"#, 400, "invalid_request"),
            (#"{"to":"sip:a@b\r\nX-Injected: 1","agent":"\#(agentID)"}"#, 400, "invalid_request"),
            (#"{"to":"+15005550006"}"#, 400, "invalid_request"),
            (#"{"to":"+15005550006","agent":"agt_nobody"}"#, 404, "agent_not_found"),
            (#"{"to":"+15005550006","agent":"\#(agentID)","ring_timeout_seconds":0}"#, 400, "invalid_request"),
            (#"{"to":"+15005550006","agent":"\#(agentID)","machine_detection":{"action":"guess"}}"#, 400, "invalid_request"),
            (#"{"to":"+15005550006","agent":"\#(agentID)","machine_detection":{"action":"leave_message"}}"#, 400, "invalid_request"),
        ]
        for (body, status, code) in cases {
            let response = try await parley.server.request("POST", "/v1/calls", json: body)
            #expect(response.status == status && response.body["error"]?["code"]?.stringValue == code, "\(body): \(response.body)")
        }
        let minted = try await parley.server.request("POST", "/v1/tokens", json: #"{"user":"ada","ttl_seconds":60}"#)
        let token = try #require(minted.body["token"]?.stringValue)
        let client = try await parley.server.request("POST", "/v1/calls", json: #"{"to":"+15005550006","agent":"\#(agentID)"}"#, token: .some(token))
        #expect(client.status == 403, "\(client.body)")
        let unknown = try await parley.server.request("GET", "/v1/calls/sip_nothing")
        #expect(unknown.status == 404 && unknown.body["error"]?["code"]?.stringValue == "call_not_found", "\(unknown.body)")
        #expect(parley.logs.lines(of: "sip.outbound_call_placed").isEmpty)
        await parley.stop()
    }

    /// SIPp rings until Parley gives up: it answers the CANCEL, then ends the INVITE with 487.
    static let ringsUntilCancelled = SIPp.scenario(
        #"""
          <recv request="INVITE">
            <action><ereg regexp="([0-9]+) INVITE" search_in="hdr" header="CSeq:" assign_to="junk,invite"/></action>
          </recv>
        """#,
        #"<Reference variables="junk"/>"#,
        reply(180, "Ringing"),
        #"<recv request="CANCEL"/>"#,
        reply(200, "OK"),
        reply(487, "Request Terminated", cseq: "[$invite] INVITE"),
        #"<recv request="ACK"/>"#
    )

    /// SIPp's answer to the last request (or to the INVITE of `cseq`): `status` with a tag of its own.
    static func reply(_ status: Int, _ phrase: String, cseq: String? = nil) -> String {
        """
          <send>
            <![CDATA[
              SIP/2.0 \(status) \(phrase)
              [last_Via:]
              [last_From:]
              [last_To:];tag=[pid]SIPpTag01[call_number]
              [last_Call-ID:]
              \(cseq.map { "CSeq: \($0)" } ?? "[last_CSeq:]")
              Contact: <sip:sipp@[local_ip]:[local_port]>
              Content-Length: 0

            ]]>
          </send>
        """
    }
}
