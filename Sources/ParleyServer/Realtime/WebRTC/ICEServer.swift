import Foundation

/// A STUN or TURN server for the web page's WebRTC calls, as a browser's `RTCIceServer` takes it
/// (`PARLEY_WEBRTC_ICE_SERVERS`). Parley itself answers ICE-lite with host candidates and needs
/// none; peers behind NATs that block direct UDP reach it through a TURN relay named here.
public struct ICEServer: Codable, Sendable, Equatable {
    /// `stun:`, `stuns:`, `turn:` or `turns:` URLs.
    public var urls: [String]
    /// The TURN user name (required for `turn:` URLs).
    public var username: String?
    /// The TURN password (required for `turn:` URLs).
    public var credential: String?

    /// Creates a server entry.
    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    private enum CodingKeys: String, CodingKey { case urls, username, credential }

    /// Decodes `urls` as one URL or a list, as `RTCIceServer` does.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let single = try? container.decode(String.self, forKey: .urls) {
            urls = [single]
        } else {
            urls = try container.decode([String].self, forKey: .urls)
        }
        username = try container.decodeIfPresent(String.self, forKey: .username)
        credential = try container.decodeIfPresent(String.self, forKey: .credential)
    }

    /// Parses a JSON array of servers; the problem in words when it is not one.
    public static func parse(_ json: String) -> Result<[ICEServer], ICEServerProblem> {
        guard let servers = try? JSONDecoder().decode([ICEServer].self, from: Data(json.utf8)) else {
            return .failure(ICEServerProblem(description: #"not a JSON array of {"urls": …, "username": …, "credential": …}"#))
        }
        for server in servers {
            guard !server.urls.isEmpty else { return .failure(ICEServerProblem(description: "a server without urls")) }
            for url in server.urls {
                let scheme = url.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
                guard ["stun", "stuns", "turn", "turns"].contains(scheme), url.count > scheme.count + 1 else {
                    return .failure(ICEServerProblem(description: "\"\(url)\" is not a stun:, stuns:, turn: or turns: URL"))
                }
                if scheme.hasPrefix("turn"), server.username?.isEmpty != false || server.credential?.isEmpty != false {
                    return .failure(ICEServerProblem(description: "\"\(url)\" needs a username and a credential"))
                }
            }
        }
        return .success(servers)
    }
}

/// Why `PARLEY_WEBRTC_ICE_SERVERS` was refused.
public struct ICEServerProblem: Error, CustomStringConvertible {
    public var description: String
}
