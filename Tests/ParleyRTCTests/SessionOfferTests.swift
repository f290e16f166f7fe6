import ParleyRTC
import Testing

/// SDP offers as aiortc and browsers send them, and the hostile ones a server must refuse.
@Suite struct SessionOfferTests {
    static let fingerprint = (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":")

    /// An offer shaped like aiortc's: audio with several codecs, a data channel, CRLF line ends,
    /// several fingerprints of which only SHA-256 matters.
    static let aiortcOffer = [
        "v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
        "m=audio 44060 UDP/TLS/RTP/SAVPF 96 9 0 8", "c=IN IP4 127.0.0.1", "a=sendrecv", "a=mid:0", "a=rtcp-mux",
        "a=rtpmap:96 opus/48000/2", "a=rtpmap:9 G722/8000", "a=rtpmap:0 PCMU/8000",
        "a=candidate:1 1 udp 2130706431 127.0.0.1 44060 typ host", "a=ice-ufrag:Jczz", "a=ice-pwd:kynDr6ZNayK01wPbK7NMZy",
        "a=fingerprint:sha-256 \(fingerprint)", "a=fingerprint:sha-512 AA:BB", "a=setup:actpass",
        "m=application 54703 UDP/DTLS/SCTP webrtc-datachannel", "a=mid:1", "a=sctp-port:5000",
    ].joined(separator: "\r\n") + "\r\n"

    @Test func readsAnAiortcOffer() throws {
        let offer = try SessionOffer(parsing: Self.aiortcOffer)
        #expect(offer.opusPayloadType == 96)
        #expect(offer.iceUsernameFragment == "Jczz")
        #expect(offer.icePassword == "kynDr6ZNayK01wPbK7NMZy")
        #expect(offer.fingerprint == Array(0..<32))
        #expect(offer.audioIndex == 0 && offer.dataChannelIndex == 1 && offer.sctpPort == 5000)
        #expect(offer.media.map(\.mid) == ["0", "1"])
    }

    /// Offers to refuse, and the error that says why.
    static let hostileOffers: [(String, SessionOfferError)] = {
        let offer = aiortcOffer
        var cases: [(String, SessionOfferError)] = []
        cases.append(("", SessionOfferError.notSDP))
        cases.append(("hello world", .malformedLine("hello world")))
        cases.append((offer.replacingOccurrences(of: "m=audio 44060 UDP/TLS/RTP/SAVPF 96 9 0 8", with: "m=video 44060 UDP/TLS/RTP/SAVPF 96 9 0 8"), .noAudio))
        cases.append((offer.replacingOccurrences(of: "m=audio 44060", with: "m=audio 0"), .noAudio))
        cases.append((offer.replacingOccurrences(of: "opus/48000/2", with: "speex/16000"), .noOpus))
        cases.append((offer.replacingOccurrences(of: "a=ice-pwd:kynDr6ZNayK01wPbK7NMZy\r\n", with: ""), .missingAttribute("ice-ufrag/ice-pwd")))
        cases.append((offer.replacingOccurrences(of: "a=fingerprint:sha-256 \(fingerprint)\r\n", with: ""), .missingAttribute("fingerprint:sha-256")))
        cases.append((offer.replacingOccurrences(of: "a=fingerprint:sha-256 \(fingerprint)", with: "a=fingerprint:sha-256 ZZ:00"), .unsupportedFingerprint("sha-256 ZZ:00")))
        cases.append((offer.replacingOccurrences(of: "a=setup:actpass", with: "a=setup:passive"), .unsupportedSetup("passive")))
        cases.append((offer.replacingOccurrences(of: "RTP/SAVPF", with: "RTP/AVP"), .unsupportedTransport("UDP/TLS/RTP/AVP")))
        cases.append((offer + String(repeating: "a=x\r\n", count: 20_000), .tooLarge))
        cases.append(("v=0\r\n" + String(repeating: "m=audio 9 UDP/TLS/RTP/SAVPF 96\r\n", count: 17), .tooManyMediaSections))
        return cases
    }()

    @Test(arguments: hostileOffers)
    func refusesWhatItCannotAnswer(text: String, error: SessionOfferError) {
        #expect(throws: error) { try SessionOffer(parsing: text) }
    }

    @Test func answersWithIceLiteOpusAndTheDataChannelAndRejectsTheRest() throws {
        let offer = try SessionOffer(parsing: Self.aiortcOffer.replacingOccurrences(
            of: "m=application", with: "m=video 9 UDP/TLS/RTP/SAVPF 97\r\na=mid:v\r\nm=application"
        ))
        let answer = SessionAnswer(
            iceUsernameFragment: "abcd", icePassword: String(repeating: "p", count: 24), fingerprint: Array(0..<32),
            host: "127.0.0.1", port: 40_000, audioSSRC: 42
        ).text(answering: offer)
        let lines = answer.components(separatedBy: "\r\n")
        #expect(lines.contains("a=ice-lite"))
        #expect(lines.contains("a=group:BUNDLE 0 1"))
        #expect(lines.contains("m=audio 40000 UDP/TLS/RTP/SAVPF 96"))
        #expect(lines.contains("a=rtpmap:96 opus/48000/2"))
        #expect(lines.contains("m=video 0 UDP/TLS/RTP/SAVPF 97"))
        #expect(lines.contains("m=application 40000 UDP/DTLS/SCTP webrtc-datachannel"))
        #expect(lines.contains("a=setup:passive"))
        #expect(lines.contains("a=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host"))
        #expect(lines.filter { $0.hasPrefix("m=") }.count == 3, "one answer section per offered section")
    }
}
