import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// The SIP door against SIP implementations nobody here wrote, from Debian: baresip calls with a
/// WAV as its microphone (and talks over the agent, and a second baresip takes a transfer); SIPp
/// plays scenarios (codecs, CANCEL, digest, allow-list, RFC 4733).
/// The server has the deterministic providers: whatever the caller says is "hello there", and
/// the answer is "Hello from Parley.".
@Suite(.serialized) struct SIPCallTests {
    static let pcmuOffer = SIPp.offer(payloadTypes: "0 101", rtpmaps: ["0 PCMU/8000", "101 telephone-event/8000"])

    @Test func baresipCallsHearsTheAnswerAndHangsUp() async throws {
        let parley = try SIPTestServer.start()
        let caller = try BaresipPhone(microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 4_000, seed: 5))
        defer { caller.remove() }
        // baresip hangs up once the server has played the answer to its end.
        let output = try await caller.call("sip:+14155550123@127.0.0.1:\(parley.sipPort)") {
            await parley.logs.first("sip.reply_played") != nil
        }
        let ended = try #require(await parley.logs.first("sip.call_ended"), "\(output)")
        let callID = try #require(ended["session"]?.stringValue)
        let heard = try caller.heard()
        let peak = heard.map(abs).max() ?? 0
        #expect(peak > 0.03, "baresip heard no answer: \(parley.logs.eventNames) \(output)")
        let items = try await parley.storedItems(ofCall: callID)
        #expect(items.first == .user("hello there"), "\(items)")
        #expect(items.contains(.assistant(text: "Hello from Parley.", toolCalls: [], interrupted: false)), "\(items)")
        let reasons = parley.logs.lines(of: "call.ended").compactMap { $0["reason"]?.stringValue }
        #expect(reasons == ["the caller hung up"], "\(output)")
        await parley.stop()
    }

    @Test func baresipTalkingOverALongAnswerInterruptsIt() async throws {
        let story = (1...30).map { "This is sentence number \($0) of a long answer." }.joined(separator: " ")
        let model = ScriptedLanguageModel(replies: [.text(story), .text("Sorry, go on.")])
        let parley = try SIPTestServer.start(languageModel: model)
        // The question, three seconds of the answer heard, then a second and a half of speech over it.
        let caller = try BaresipPhone(
            microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 3_000, seed: 5) + TelephoneAudio.speech(milliseconds: 1_500)
                + TelephoneAudio.lineNoise(milliseconds: 8_000, seed: 9)
        )
        defer { caller.remove() }
        // baresip hangs up once the reply to its interruption was played in full.
        let output = try await caller.call("sip:+14155550123@127.0.0.1:\(parley.sipPort)") {
            guard let long = await parley.logs.first("response.done")?["response"]?.stringValue else { return false }
            return await parley.logs.first("sip.reply_played", matching: { $0["response"]?.stringValue != long }) != nil
        }
        let ended = try #require(await parley.logs.first("sip.call_ended"), "\(output)")
        let items = try await parley.storedItems(ofCall: try #require(ended["session"]?.stringValue))
        let cut = items.compactMap { if case .assistant(let text, [], true) = $0 { text } else { nil } }.first
        // What is stored of the long answer is what went out before the caller talked over it: a few seconds.
        #expect(cut.map { !$0.isEmpty && story.hasPrefix($0) && $0.count < story.count / 3 } == true, "\(items)")
        #expect(items.contains(.assistant(text: "Sorry, go on.", toolCalls: [], interrupted: false)), "\(items)")
        #expect((try caller.heard().map(abs).max() ?? 0) > 0.03, "baresip heard no answer: \(output)")
        await parley.stop()
    }

    @Test func aTransferIsAnsweredByASecondBaresip() async throws {
        let transfereePort = try BaresipPhone.freeSIPPort()
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_transfer_1", name: "transfer_call", arguments: #"{"target":"sip:transferee@127.0.0.1:\#(transfereePort)"}"#)]),
            .text("Transferring you now. Goodbye."),
        ])
        let parley = try SIPTestServer.start(languageModel: model)
        let caller = try BaresipPhone(microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 8_000, seed: 5))
        let transferee = try BaresipPhone(
            microphone: TelephoneAudio.lineNoise(milliseconds: 8_000, seed: 3), user: "transferee", listenPort: transfereePort, autoAnswer: true
        )
        defer {
            caller.remove()
            transferee.remove()
        }
        // The second baresip answers the call the first one places on Parley's REFER; both hang up once
        // it is up and Parley has hung up after its goodbye.
        let answering = Task { try await transferee.answer { await transferee.output.shows("Call established") } }
        let output = try await caller.call("sip:+14155550123@127.0.0.1:\(parley.sipPort)") {
            let established = await transferee.output.shows("Call established")
            return await parley.logs.first("sip.call_ended") != nil && established
        }
        let answered = try await answering.value
        #expect(answered.contains("Call established"), "the transferee got no call: \(answered)\ncaller: \(output)")
        #expect(output.contains("transferee@127.0.0.1"), "\(output)")
        let ended = try #require(await parley.logs.first("sip.call_ended"), "\(parley.logs.eventNames)")
        #expect(parley.logs.lines(of: "sip.end_call").count == 1, "\(parley.logs.eventNames) caller: \(output)\ntransferee: \(answered)")
        let items = try await parley.storedItems(ofCall: try #require(ended["session"]?.stringValue))
        #expect(items.contains(.assistant(text: "Transferring you now. Goodbye.", toolCalls: [], interrupted: false)), "\(items)")
        await parley.stop()
    }

    @Test func anOpusCallIsAnsweredInOpus() async throws {
        let parley = try SIPTestServer.start()
        let caller = try BaresipPhone(
            microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 4_000, seed: 5), opus: true
        )
        defer { caller.remove() }
        let output = try await caller.call("sip:+14155550123@127.0.0.1:\(parley.sipPort)") {
            await parley.logs.first("sip.reply_played") != nil
        }
        let started = try #require(await parley.logs.first("sip.call_started"), "\(output)")
        #expect(started["codec"]?.stringValue == "opus")
        #expect((try caller.heard().map(abs).max() ?? 0) > 0.03, "baresip heard no answer: \(parley.logs.eventNames) \(output)")
        let ended = try #require(await parley.logs.first("sip.call_ended"))
        let items = try await parley.storedItems(ofCall: try #require(ended["session"]?.stringValue))
        #expect(items.first == .user("hello there"), "\(items)")
        await parley.stop()
    }

    @Test func endCallHangsUpOnceTheGoodbyeWasHeard() async throws {
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_end_1", name: "end_call", arguments: #"{"reason":"the caller is done"}"#)]),
            .text("Goodbye, and thank you."),
        ])
        let parley = try SIPTestServer.start(languageModel: model)
        let caller = try BaresipPhone(microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 8_000, seed: 5))
        defer { caller.remove() }
        // baresip does not hang up: the server does, after the goodbye.
        let output = try await caller.call("sip:+14155550123@127.0.0.1:\(parley.sipPort)") {
            _ = await parley.logs.first("sip.call_ended")
            return false
        }
        #expect(parley.logs.lines(of: "sip.end_call").count == 1, "\(parley.logs.eventNames)")
        let reasons = parley.logs.lines(of: "call.ended").compactMap { $0["reason"]?.stringValue }
        #expect(reasons == ["hung up by the server"], "\(output)")
        #expect((try caller.heard().map(abs).max() ?? 0) > 0.03, "the goodbye was not heard: \(output)")
        let callID = try #require(parley.logs.lines(of: "sip.call_ended").first?["session"]?.stringValue)
        let items = try await parley.storedItems(ofCall: callID)
        #expect(items.contains(.assistant(text: "Goodbye, and thank you.", toolCalls: [], interrupted: false)), "\(items)")
        await parley.stop()
    }

    @Test func sendDTMFPressesKeysTheCallerReceives() async throws {
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_keys_1", name: "send_dtmf", arguments: #"{"digits":"42"}"#)]),
            .text("Done."),
        ])
        let parley = try SIPTestServer.start(languageModel: model)
        let caller = try BaresipPhone(microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 8_000, seed: 5))
        defer { caller.remove() }
        let output = try await caller.call("sip:+14155550123@127.0.0.1:\(parley.sipPort)") {
            await parley.logs.first("sip.reply_played") != nil
        }
        #expect(output.contains("received event: '4' (end=1)") && output.contains("received event: '2' (end=1)"), "\(output)")
        await parley.stop()
    }

    @Test func transferCallRefersTheCallerAndHangsUpAfterTheGoodbye() async throws {
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_transfer_1", name: "transfer_call", arguments: #"{"target":"+15005550007"}"#)]),
            .text("Transferring you now. Goodbye."),
        ])
        let parley = try SIPTestServer.start(languageModel: model)
        let agent = try await parley.server.request(
            "POST", "/v1/agents", json: #"{"name":"Switchboard","telephony":{"phone_numbers":["+14155550123"],"key_press_messages":true}}"#
        )
        #expect(agent.status == 201, "\(agent.body)")
        // SIPp presses 1, takes the REFER (202), reports the new call answered (NOTIFY), and takes Parley's BYE.
        let result = try await SIPp.run(SIPp.scenario(
            SIPp.answeredInvite(sdp: Self.pcmuOffer),
            #"<nop><action><exec play_pcap_audio="/usr/share/sip-tester/dtmf_2833_1.pcap"/></action></nop>"#,
            #"""
              <recv request="REFER" crlf="true">
                <action>
                  <ereg regexp="&lt;sip:\+15005550007@127\.0\.0\.1&gt;" search_in="hdr" header="Refer-To:" check_it="true" assign_to="target"/>
                  <ereg regexp="tag=([^;]+)" search_in="hdr" header="From:" check_it="true" assign_to="junk,parleytag"/>
                </action>
              </recv>
            """#,
            #"<Reference variables="target,junk"/>"#,
            """
              <send>
                <![CDATA[
                  SIP/2.0 202 Accepted
                  [last_Via:]
                  [last_From:]
                  [last_To:]
                  [last_Call-ID:]
                  [last_CSeq:]
                  Contact: <sip:sipp@[local_ip]:[local_port]>
                  Content-Length: 0

                ]]>
              </send>
              <send retrans="500">
                <![CDATA[
                  NOTIFY [next_url] SIP/2.0
                  Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
                  From: sipp <sip:+15005550006@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
                  To: <sip:[service]@[remote_ip]:[remote_port]>;tag=[$parleytag]
                  Call-ID: [call_id]
                  CSeq: 2 NOTIFY
                  Contact: <sip:sipp@[local_ip]:[local_port]>
                  Event: refer
                  Subscription-State: terminated;reason=noresource
                  Content-Type: message/sipfrag;version=2.0
                  Content-Length: [len]

                  SIP/2.0 200 OK
                ]]>
              </send>
              <recv response="200"/>
              <recv request="BYE"/>
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
        #expect(result.status == 0, "\(result.output)")
        let ended = try #require(await parley.logs.first("sip.call_ended"))
        #expect(parley.logs.lines(of: "sip.end_call").count == 1, "\(parley.logs.eventNames)")
        let items = try await parley.storedItems(ofCall: try #require(ended["session"]?.stringValue))
        #expect(items.contains(.assistant(text: "Transferring you now. Goodbye.", toolCalls: [], interrupted: false)), "\(items)")
        await parley.stop()
    }

    @Test func theBackendWatchesAndSteersACallOnTheSideband() async throws {
        let parley = try SIPTestServer.start()
        let caller = Task {
            try await SIPp.run(SIPp.heldCall(sdp: Self.pcmuOffer, milliseconds: 5000), port: parley.sipPort)
        }
        let started = try #require(await parley.logs.first("sip.call_started"))
        let callID = try #require(started["call_id"]?.stringValue)
        let sideband = try await RealtimeTestClient.connect(parley.server, query: "?call_id=\(callID)")
        #expect(await sideband.next("session.updated") != nil)
        try sideband.send(#"{"type":"response.create"}"#)
        let done = try #require(await sideband.next("response.done", seconds: 5))
        #expect(done["response"]?["status"]?.stringValue == "completed", "\(done)")
        let result = try await caller.value
        #expect(result.status == 0, "\(result.output)")
        #expect(await sideband.closes(within: 10), "the sideband closes when the call ends")
        await parley.stop()
    }

    @Test func aCallOverTCPIsAnsweredAndEnded() async throws {
        let parley = try SIPTestServer.start()
        let result = try await SIPp.run(SIPp.heldCall(sdp: Self.pcmuOffer, milliseconds: 1000), port: parley.sipPort, extraArguments: ["-t", "t1"])
        #expect(result.status == 0, "\(result.output)")
        let started = try #require(await parley.logs.first("sip.call_started"))
        #expect(started["codec"]?.stringValue == "PCMU")
        let reasons = parley.logs.lines(of: "call.ended").compactMap { $0["reason"]?.stringValue }
        #expect(reasons == ["the caller hung up"], "\(parley.logs.eventNames)")
        await parley.stop()
    }

    @Test func anOfferWithNoCodecWeSpeakIsRefusedWith488() async throws {
        let parley = try SIPTestServer.start()
        let gsmOnly = SIPp.offer(payloadTypes: "3", rtpmaps: ["3 GSM/8000"])
        let result = try await SIPp.run(SIPp.scenario(
            SIPp.invite(sdp: gsmOnly),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="488"/>"#,
            SIPp.failureACK()
        ), port: parley.sipPort)
        #expect(result.status == 0, "\(result.output)")
        #expect(parley.refusals("no_common_codec") == 1)
        await parley.stop()
    }

    @Test func aCallCancelledBeforeTheAnswerEndsWith487() async throws {
        // A backend that hears of the call and never decides keeps it ringing, so the CANCEL
        // always comes before an answer (without one, a quick answer could overtake it).
        let (backend, _) = try SIPCallControlTests.backend()
        let parley = try SIPCallControlTests.parley(backend: backend)
        let result = try await SIPp.run(SIPp.scenario(
            SIPp.invite(sdp: Self.pcmuOffer),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="180"/>"#,
            """
              <send>
                <![CDATA[
                  CANCEL sip:[service]@[remote_ip]:[remote_port] SIP/2.0
                  [last_Via:]
                  From: sipp <sip:+15005550006@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
                  To: <sip:[service]@[remote_ip]:[remote_port]>
                  Call-ID: [call_id]
                  CSeq: 1 CANCEL
                  Max-Forwards: 70
                  Content-Length: 0

                ]]>
              </send>
            """,
            #"<recv response="200"/>"#,
            #"<recv response="487"/>"#,
            SIPp.failureACK()
        ), port: parley.sipPort)
        #expect(result.status == 0, "\(result.output)")
        await parley.stop()
        await backend.shutdown()
    }

    @Test func aTrunkWithDigestCredentialsIsChallengedThenAnswered() async throws {
        let parley = try SIPTestServer.start(trunks: [], credentials: ("trunk", "s3cret-digest"))
        let result = try await SIPp.run(SIPp.scenario(
            SIPp.invite(sdp: Self.pcmuOffer),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="401" auth="true"/>"#,
            SIPp.failureACK(),
            SIPp.invite(sdp: Self.pcmuOffer, cseq: 2, authentication: true),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="180" optional="true"/>"#,
            #"<recv response="200" rrs="true"/>"#,
            SIPp.successACK(cseq: 2),
            SIPp.bye(cseq: 3)
        ), port: parley.sipPort, extraArguments: ["-au", "trunk", "-ap", "s3cret-digest"])
        #expect(result.status == 0, "\(result.output)")
        #expect(await parley.logs.first("sip.call_ended") != nil)
        await parley.stop()
    }

    @Test func aWrongDigestPasswordIsRefusedAndCounted() async throws {
        let parley = try SIPTestServer.start(trunks: [], credentials: ("trunk", "s3cret-digest"))
        let result = try await SIPp.run(SIPp.scenario(
            SIPp.invite(sdp: Self.pcmuOffer),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="401" auth="true"/>"#,
            SIPp.failureACK(),
            SIPp.invite(sdp: Self.pcmuOffer, cseq: 2, authentication: true),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="403"/>"#,
            SIPp.failureACK(cseq: 2)
        ), port: parley.sipPort, extraArguments: ["-au", "trunk", "-ap", "guessed"])
        #expect(result.status == 0, "\(result.output)")
        #expect(parley.refusals("authentication_failed") == 1)
        await parley.stop()
    }

    @Test func aCallFromAnAddressNotOnTheAllowListIsRefusedAndCounted() async throws {
        let parley = try SIPTestServer.start(trunks: ["192.0.2.0/24"])
        let result = try await SIPp.run(SIPp.scenario(
            SIPp.invite(sdp: Self.pcmuOffer),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="403"/>"#,
            SIPp.failureACK()
        ), port: parley.sipPort)
        #expect(result.status == 0, "\(result.output)")
        #expect(parley.refusals("address_not_allowed") == 1)
        #expect(parley.server.app.context.sessions.count == 0)
        await parley.stop()
    }

    @Test func keyPressesInRFC4733ReachTheAgent() async throws {
        let parley = try SIPTestServer.start()
        let agent = try await parley.server.request(
            "POST", "/v1/agents", json: #"{"name":"Phone menu","telephony":{"phone_numbers":["+14155550123"],"key_press_messages":true}}"#
        )
        #expect(agent.status == 201, "\(agent.body)")
        let result = try await SIPp.run(SIPp.scenario(
            SIPp.answeredInvite(sdp: Self.pcmuOffer),
            #"<nop><action><exec play_pcap_audio="/usr/share/sip-tester/dtmf_2833_1.pcap"/></action></nop>"#,
            #"<pause milliseconds="1500"/>"#,
            SIPp.bye(cseq: 2)
        ), port: parley.sipPort)
        #expect(result.status == 0, "\(result.output)")
        let ended = try #require(await parley.logs.first("sip.call_ended"))
        let items = try await parley.storedItems(ofCall: try #require(ended["session"]?.stringValue))
        #expect(items.contains(.user("The caller pressed 1.")), "\(items)")
        #expect(parley.logs.lines(of: "sip.dtmf").count == 1)
        await parley.stop()
    }

    @Test func optionsIsAnsweredWithWhatTheDoorAllows() async throws {
        let parley = try SIPTestServer.start()
        let result = try await SIPp.run(SIPp.scenario(
            """
              <send retrans="500">
                <![CDATA[
                  OPTIONS sip:[service]@[remote_ip]:[remote_port] SIP/2.0
                  Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
                  From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
                  To: <sip:[service]@[remote_ip]:[remote_port]>
                  Call-ID: [call_id]
                  CSeq: 1 OPTIONS
                  Max-Forwards: 70
                  Content-Length: 0

                ]]>
              </send>
            """,
            #"<recv response="200"><action><ereg regexp="INVITE, ACK, CANCEL, BYE, OPTIONS" search_in="hdr" header="Allow:" check_it="true" assign_to="allow"/></action></recv>"#,
            #"<Reference variables="allow"/>"#
        ), port: parley.sipPort)
        #expect(result.status == 0, "\(result.output)")
        await parley.stop()
    }
}
