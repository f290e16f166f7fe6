import Foundation

/// Writes the SDP answer to a `SessionOffer`: ICE-lite with one host candidate, DTLS passive,
/// Opus on the audio section, the data channel when offered, every other section rejected.
public struct SessionAnswer: Sendable {
    /// Parley's ICE username fragment for the call.
    public var iceUsernameFragment: String
    /// Parley's ICE password for the call.
    public var icePassword: String
    /// Parley's certificate fingerprint (SHA-256).
    public var fingerprint: [UInt8]
    /// The address and UDP port every call is reached on.
    public var host: String
    public var port: Int
    /// The SSRC of Parley's outgoing audio.
    public var audioSSRC: UInt32

    /// Creates the answer's parameters.
    public init(iceUsernameFragment: String, icePassword: String, fingerprint: [UInt8], host: String, port: Int, audioSSRC: UInt32) {
        self.iceUsernameFragment = iceUsernameFragment
        self.icePassword = icePassword
        self.fingerprint = fingerprint
        self.host = host
        self.port = port
        self.audioSSRC = audioSSRC
    }

    /// The answer's text (CRLF line ends).
    public func text(answering offer: SessionOffer) -> String {
        let fingerprintText = fingerprint.map { String(format: "%02X", $0) }.joined(separator: ":")
        let accepted = offer.media.indices.filter { $0 == offer.audioIndex || $0 == offer.dataChannelIndex }
        var lines = [
            "v=0",
            "o=- \(UInt32.random(in: 1...UInt32.max)) 2 IN IP4 \(host)",
            "s=-",
            "t=0 0",
            "a=group:BUNDLE " + accepted.map { offer.media[$0].mid }.joined(separator: " "),
            "a=ice-lite",
            "a=msid-semantic: WMS parley",
        ]
        let transport = [
            "c=IN IP4 \(host)",
            "a=ice-ufrag:\(iceUsernameFragment)",
            "a=ice-pwd:\(icePassword)",
            "a=fingerprint:sha-256 \(fingerprintText)",
            "a=setup:passive",
            "a=candidate:1 1 udp 2130706431 \(host) \(port) typ host",
            "a=end-of-candidates",
        ]
        for (index, media) in offer.media.enumerated() {
            if index == offer.audioIndex {
                let type = offer.opusPayloadType
                lines.append("m=audio \(port) \(media.proto) \(type)")
                lines += transport
                lines += [
                    "a=mid:\(media.mid)",
                    "a=sendrecv",
                    "a=rtcp-mux",
                    "a=rtpmap:\(type) opus/48000/2",
                    "a=fmtp:\(type) minptime=10;useinbandfec=1",
                    "a=msid:parley audio",
                    "a=ssrc:\(audioSSRC) cname:parley",
                ]
            } else if index == offer.dataChannelIndex {
                lines.append("m=application \(port) \(media.proto) webrtc-datachannel")
                lines += transport
                lines += ["a=mid:\(media.mid)", "a=sctp-port:5000", "a=max-message-size:\(SCTPAssociation.maximumMessageSize)"]
            } else {
                // Rejected: port 0, the offered formats, its mid.
                lines.append("m=\(media.kind) 0 \(media.proto) \(media.formats.joined(separator: " "))")
                lines += ["c=IN IP4 0.0.0.0", "a=mid:\(media.mid)", "a=inactive"]
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
