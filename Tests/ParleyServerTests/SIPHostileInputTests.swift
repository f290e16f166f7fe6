import Foundation
import ParleyTesting
import Testing

/// Hostile input at the SIP door: malformed SIP and SDP, oversized datagrams, RTP from an
/// address that is not the caller's, a flood of INVITEs. Each is refused or ignored, and the door
/// keeps answering.
@Suite(.serialized) struct SIPHostileInputTests {
    static let options = SIPp.scenario(
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
        #"<recv response="200"/>"#
    )

    /// Sends `datagram` to `port` on loopback over UDP, from `source`.
    static func send(_ datagram: [UInt8], to port: Int, from source: String = "127.0.0.1") {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(descriptor) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        _ = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        remote.sin_port = UInt16(port).bigEndian
        _ = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }

    @Test func malformedAndOversizedDatagramsLeaveTheDoorAnswering() async throws {
        let parley = try SIPTestServer.start()
        var random = SystemRandomNumberGenerator()
        let hostile: [[UInt8]] = [
            Array("NOT SIP AT ALL\r\n\r\n".utf8),
            Array("INVITE sip:x SIP/2.0\r\nVia: \r\nCSeq: banana\r\nContent-Length: 99999\r\n\r\nv=0".utf8),
            Array("INVITE sip:+1@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK1\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:c@d>\r\nCall-ID: x\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: 12\r\n\r\nm=audio x y\r\n".utf8),
            (0..<1_400).map { _ in UInt8.random(in: 0...255, using: &random) },
            [UInt8](repeating: UInt8(ascii: "A"), count: 65_000),
            [],
        ]
        for datagram in hostile { Self.send(datagram, to: parley.sipPort) }
        let result = try await SIPp.run(Self.options, port: parley.sipPort)
        #expect(result.status == 0, "the door stopped answering after hostile datagrams: \(result.output)")
        await parley.stop()
    }

    @Test func aMalformedSDPOfferIsRefusedWith400() async throws {
        let parley = try SIPTestServer.start()
        let result = try await SIPp.run(SIPp.scenario(
            SIPp.invite(sdp: "this is not\nan SDP offer"),
            #"<recv response="100" optional="true"/>"#,
            #"<recv response="400"/>"#,
            SIPp.failureACK()
        ), port: parley.sipPort)
        #expect(result.status == 0, "\(result.output)")
        #expect(parley.refusals("malformed_offer") == 1)
        let again = try await SIPp.run(Self.options, port: parley.sipPort)
        #expect(again.status == 0, "\(again.output)")
        await parley.stop()
    }

    @Test func rtpFromAnUnexpectedAddressIsIgnored() async throws {
        let parley = try SIPTestServer.start()
        let caller = Task {
            try await SIPp.run(SIPp.heldCall(sdp: SIPCallTests.pcmuOffer, milliseconds: 3000), port: parley.sipPort)
        }
        // From 127.0.0.2, neither the caller's signalling nor its SDP address: 50 packets of μ-law, and an oversized one.
        let started = try #require(await parley.logs.first("sip.call_started"))
        let mediaPort = Int(try #require(started["rtp_port"]?.numberValue))
        for sequence in 0..<50 {
            Self.send([0x80, 0, 0, UInt8(sequence), 0, 0, 0, UInt8(sequence), 1, 2, 3, 4] + [UInt8](repeating: 0x7F, count: 160), to: mediaPort, from: "127.0.0.2")
        }
        Self.send([0x80, 0, 0, 99, 0, 0, 0, 99, 1, 2, 3, 4] + [UInt8](repeating: 0x7F, count: 9_000), to: mediaPort, from: "127.0.0.2")
        let result = try await caller.value
        #expect(result.status == 0, "\(result.output)")
        let ended = try #require(await parley.logs.first("sip.call_ended"))
        #expect(ended["ignored_rtp_packets"]?.numberValue ?? 0 >= 51, "\(ended)")
        await parley.stop()
    }

    @Test func anInviteFloodIsRefusedWhileAnEstablishedCallCarriesOn() async throws {
        let parley = try SIPTestServer.start()
        let established = Task {
            try await SIPp.run(SIPp.heldCall(sdp: SIPCallTests.pcmuOffer, milliseconds: 3000), port: parley.sipPort)
        }
        _ = try #require(await parley.logs.first("sip.call_started"))
        // 200 INVITEs from one address as fast as they are answered, each offering only GSM: the
        // budget's burst (40, less the established call's INVITE) gets 488, the rest 503.
        let answers = try await SIPFlood.send(invites: 200, to: parley.sipPort)
        let refused = answers.values.filter { $0.status == 503 && $0.retryAfter }.count
        let unanswerable = answers.values.filter { $0.status == 488 }.count
        #expect(answers.count == 200, "every INVITE is answered: \(answers.count)")
        #expect(refused >= 150 && unanswerable <= 50 && refused + unanswerable == answers.count, "503: \(refused), 488: \(unanswerable)")
        #expect(parley.refusals("invite_rate_exceeded") == refused)
        let health = try await parley.server.request("GET", "/healthz", token: .some(nil))
        #expect(health.status == 200)
        let result = try await established.value
        #expect(result.status == 0, "the established call was disturbed: \(result.output)")
        let again = try await SIPp.run(Self.options, port: parley.sipPort)
        #expect(again.status == 0, "\(again.output)")
        await parley.stop()
    }
}

/// A flood of INVITEs from one UDP socket, and the final answer each got.
enum SIPFlood {
    /// A final answer: its status and whether it asked to try again later.
    struct Answer: Sendable {
        var status: Int
        var retryAfter: Bool
    }

    /// Sends `invites` INVITEs (distinct calls, GSM-only offers) to `port` on loopback as fast as
    /// the door answers, in batches of 40 (more at once would overflow the socket buffers and be
    /// dropped by the kernel, not by the door), and collects the final answer of each by Call-ID.
    static func send(invites: Int, to port: Int) async throws -> [String: Answer] {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        let localPort = Int(UInt16(bigEndian: local.sin_port))
        // A thread of its own sends and waits on the socket, so no task of the pool blocks.
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                defer { close(descriptor) }
                var remote = sockaddr_in()
                remote.sin_family = sa_family_t(AF_INET)
                remote.sin_addr.s_addr = inet_addr("127.0.0.1")
                remote.sin_port = UInt16(port).bigEndian
                var answers: [String: Answer] = [:]
                let deadline = ContinuousClock.now + TestDeadline.seconds(15)
                var buffer = [UInt8](repeating: 0, count: 65_536)
                for batch in stride(from: 0, to: invites, by: 40) {
                    for index in batch..<min(batch + 40, invites) {
                        let datagram = Array(invite(index, port: port, localPort: localPort).utf8)
                        _ = datagram.withUnsafeBytes { bytes in
                            withUnsafePointer(to: &remote) {
                                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                    sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                                }
                            }
                        }
                    }
                    while answers.count < min(batch + 40, invites), ContinuousClock.now < deadline {
                        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                        guard poll(&ready, 1, 200) > 0 else { continue }
                        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                        guard count > 0 else { continue }
                        let lines = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\r\n")
                        guard let statusLine = lines.first?.split(separator: " "), statusLine.count >= 2, let status = Int(statusLine[1]), status >= 200,
                              let callID = lines.first(where: { $0.lowercased().hasPrefix("call-id:") })?.dropFirst(8).trimmingCharacters(in: .whitespaces)
                        else { continue }
                        answers[callID] = Answer(status: status, retryAfter: lines.contains { $0.lowercased().hasPrefix("retry-after:") })
                    }
                }
                continuation.resume(returning: answers)
            }
        }
    }

    private static func invite(_ index: Int, port: Int, localPort: Int) -> String {
        let sdp = "v=0\r\no=flood 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 9 RTP/AVP 3\r\na=rtpmap:3 GSM/8000\r\n"
        return "INVITE sip:+14155550123@127.0.0.1:\(port) SIP/2.0\r\n"
            + "Via: SIP/2.0/UDP 127.0.0.1:\(localPort);branch=z9hG4bKflood\(index)\r\n"
            + "From: <sip:flood@127.0.0.1>;tag=flood\(index)\r\nTo: <sip:+14155550123@127.0.0.1>\r\n"
            + "Call-ID: flood-\(index)@127.0.0.1\r\nCSeq: 1 INVITE\r\nContact: <sip:flood@127.0.0.1:\(localPort)>\r\nMax-Forwards: 70\r\n"
            + "Content-Type: application/sdp\r\nContent-Length: \(sdp.utf8.count)\r\n\r\n" + sdp
    }
}
