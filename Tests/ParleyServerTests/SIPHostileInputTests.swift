import Foundation
import ParleyTesting
import Testing

/// Hostile input at the SIP door: malformed SIP and SDP, oversized datagrams, RTP from an
/// address that is not the caller's. Each is refused or ignored, and the door keeps answering.
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
            try await SIPp.run(SIPp.scenario(
                SIPp.invite(sdp: SIPCallTests.pcmuOffer),
                #"<recv response="100" optional="true"/>"#,
                #"<recv response="180" optional="true"/>"#,
                #"<recv response="200" rrs="true"/>"#,
                SIPp.successACK(),
                #"<pause milliseconds="3000"/>"#,
                SIPp.bye(cseq: 2)
            ), port: parley.sipPort)
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
}
