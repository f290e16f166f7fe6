import Foundation

/// What Parley needs from a WebRTC peer's SDP offer: its ICE credentials, its DTLS
/// certificate fingerprint, the Opus audio section and the data channel section.
///
/// Parsing is bounded and strict about what matters (a clear `SessionOfferError` names the
/// problem) and lenient about everything else (unknown attributes are ignored).
public struct SessionOffer: Sendable, Equatable {
    /// One `m=` section of the offer, in order; the answer has one section per offered one.
    public struct Media: Sendable, Equatable {
        /// The media kind: `audio`, `video`, `application`, …
        public var kind: String
        /// The transport protocol, for example `UDP/TLS/RTP/SAVPF`.
        public var proto: String
        /// The formats listed on the `m=` line (payload types, or `webrtc-datachannel`).
        public var formats: [String]
        /// The `a=mid:` value.
        public var mid: String
    }

    /// The largest offer accepted, in bytes (browsers send 3–8 KB).
    public static let maximumSize = 64 * 1024
    /// The most `m=` sections accepted.
    public static let maximumMediaSections = 16

    /// Every offered section.
    public var media: [Media]
    /// The peer's ICE username fragment.
    public var iceUsernameFragment: String
    /// The peer's ICE password.
    public var icePassword: String
    /// The peer's certificate fingerprint (SHA-256, 32 bytes).
    public var fingerprint: [UInt8]
    /// The peer's `a=setup:` role (`actpass`, `active` or `passive`).
    public var setupRole: String
    /// The index in `media` of the audio section Parley answers.
    public var audioIndex: Int
    /// The Opus payload type the peer chose.
    public var opusPayloadType: UInt8
    /// The index in `media` of the data channel section, if offered.
    public var dataChannelIndex: Int?
    /// The peer's SCTP port (`a=sctp-port`, 5000 by default).
    public var sctpPort: UInt16

    /// Parses an offer.
    /// - Throws: `SessionOfferError` naming what is missing or malformed.
    public init(parsing text: String) throws(SessionOfferError) {
        guard text.utf8.count <= Self.maximumSize else { throw .tooLarge }
        var sessionUfrag: String?, sessionPassword: String?, sessionFingerprint: [UInt8]?, sessionSetup: String?
        var sections: [Section] = []
        var sawVersion = false
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let line = Substring(rawLine)
            guard line.count >= 2, line.dropFirst().first == "=" else { throw .malformedLine(String(line.prefix(80))) }
            let value = line.dropFirst(2)
            switch line.first {
            case "v":
                sawVersion = true
            case "m":
                guard sections.count < Self.maximumMediaSections else { throw .tooManyMediaSections }
                let fields = value.split(separator: " ")
                guard fields.count >= 4 else { throw .malformedLine(String(line.prefix(80))) }
                sections.append(Section(kind: String(fields[0]), proto: String(fields[2]), formats: fields[3...].map(String.init), port: Int(fields[1]) ?? 0))
            case "a":
                let (name, argument) = Self.attribute(value)
                if sections.isEmpty {
                    switch name {
                    case "ice-ufrag": sessionUfrag = argument
                    case "ice-pwd": sessionPassword = argument
                    case "fingerprint": sessionFingerprint = try Self.fingerprint(argument) ?? sessionFingerprint
                    case "setup": sessionSetup = argument
                    default: break
                    }
                } else {
                    try sections[sections.count - 1].apply(name: name, argument: argument)
                }
            default:
                break
            }
        }
        guard sawVersion else { throw .notSDP }
        guard let audioIndex = sections.firstIndex(where: { $0.kind == "audio" && $0.port != 0 }) else { throw .noAudio }
        let audio = sections[audioIndex]
        guard audio.proto.uppercased().contains("SAVPF") || audio.proto.uppercased().contains("SAVP") else { throw .unsupportedTransport(audio.proto) }
        guard let opus = audio.opusPayloadType else { throw .noOpus }
        guard let ufrag = audio.ufrag ?? sessionUfrag, let password = audio.password ?? sessionPassword else { throw .missingAttribute("ice-ufrag/ice-pwd") }
        guard (4...256).contains(ufrag.count), (22...256).contains(password.count) else { throw .missingAttribute("ice-ufrag/ice-pwd of valid length") }
        guard let fingerprint = audio.fingerprint ?? sessionFingerprint else { throw .missingAttribute("fingerprint:sha-256") }
        let setup = audio.setup ?? sessionSetup ?? "actpass"
        guard setup == "actpass" || setup == "active" else { throw .unsupportedSetup(setup) }
        let dataIndex = sections.firstIndex { $0.kind == "application" && $0.formats.contains("webrtc-datachannel") && $0.port != 0 }
        var media: [Media] = []
        for (index, section) in sections.enumerated() {
            media.append(Media(kind: section.kind, proto: section.proto, formats: section.formats, mid: section.mid ?? String(index)))
        }
        self.media = media
        iceUsernameFragment = ufrag
        icePassword = password
        self.fingerprint = fingerprint
        setupRole = setup
        self.audioIndex = audioIndex
        opusPayloadType = opus
        dataChannelIndex = dataIndex
        sctpPort = dataIndex.flatMap { sections[$0].sctpPort } ?? 5000
    }

    /// An `m=` section as it is read.
    private struct Section {
        var kind: String
        var proto: String
        var formats: [String]
        var port: Int = 9
        var mid: String?
        var ufrag: String?
        var password: String?
        var fingerprint: [UInt8]?
        var setup: String?
        var opusPayloadType: UInt8?
        var sctpPort: UInt16?

        mutating func apply(name: Substring, argument: String) throws(SessionOfferError) {
            switch name {
            case "mid":
                guard (1...32).contains(argument.count) else { throw .malformedLine("a=mid:\(argument.prefix(40))") }
                mid = argument
            case "ice-ufrag": ufrag = argument
            case "ice-pwd": password = argument
            case "fingerprint": fingerprint = try SessionOffer.fingerprint(argument) ?? fingerprint
            case "setup": setup = argument
            case "sctp-port": sctpPort = UInt16(argument)
            case "rtpmap":
                // "111 opus/48000/2"
                let parts = argument.split(separator: " ", maxSplits: 1)
                if parts.count == 2, parts[1].lowercased().hasPrefix("opus/48000"), let type = UInt8(parts[0]),
                   formats.contains(String(parts[0])), opusPayloadType == nil {
                    opusPayloadType = type
                }
            default: break
            }
        }
    }

    private static func attribute(_ value: Substring) -> (Substring, String) {
        guard let colon = value.firstIndex(of: ":") else { return (value, "") }
        return (value[..<colon], String(value[value.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
    }

    /// Parses `sha-256 AB:CD:…` into 32 bytes; `nil` for another hash (peers list several).
    static func fingerprint(_ argument: String) throws(SessionOfferError) -> [UInt8]? {
        let parts = argument.split(separator: " ")
        guard parts.count == 2 else { throw .unsupportedFingerprint(String(argument.prefix(20))) }
        guard parts[0].lowercased() == "sha-256" else { return nil }
        var bytes: [UInt8] = []
        for pair in parts[1].split(separator: ":") {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else { throw .unsupportedFingerprint(String(argument.prefix(20))) }
            bytes.append(byte)
        }
        guard bytes.count == 32 else { throw .unsupportedFingerprint(String(argument.prefix(20))) }
        return bytes
    }
}

/// Why an SDP offer was refused; `description` is the message a client sees in the 400.
public enum SessionOfferError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge
    case notSDP
    case malformedLine(String)
    case tooManyMediaSections
    case noAudio
    case noOpus
    case unsupportedTransport(String)
    case missingAttribute(String)
    case unsupportedFingerprint(String)
    case unsupportedSetup(String)

    public var description: String {
        switch self {
        case .tooLarge: "The SDP offer is larger than \(SessionOffer.maximumSize) bytes."
        case .notSDP: "The body is not an SDP offer (no 'v=' line)."
        case .malformedLine(let line): "The SDP offer has a malformed line: '\(line)'."
        case .tooManyMediaSections: "The SDP offer has more than \(SessionOffer.maximumMediaSections) media sections."
        case .noAudio: "The SDP offer has no audio section; a realtime call needs one (add an audio transceiver)."
        case .noOpus: "The SDP offer's audio section does not offer Opus (opus/48000/2)."
        case .unsupportedTransport(let proto): "The audio section's transport '\(proto)' is not DTLS-SRTP (UDP/TLS/RTP/SAVPF)."
        case .missingAttribute(let name): "The SDP offer lacks a=\(name)."
        case .unsupportedFingerprint(let value): "The SDP offer's fingerprint '\(value)' is not a SHA-256 fingerprint."
        case .unsupportedSetup(let role): "The SDP offer's a=setup:\(role) is not supported; offer actpass or active."
        }
    }
}
