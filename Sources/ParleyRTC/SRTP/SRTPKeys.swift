/// The SRTP master keys and salts of a call, split from the DTLS-SRTP keying material
/// (RFC 5764 §4.2: client key, server key, client salt, server salt).
struct SRTPKeys: Sendable {
    static let keyLength = 16
    static let saltLength = 14

    /// Key then salt for what this side sends.
    var outbound: [UInt8]
    /// Key then salt for what this side receives.
    var inbound: [UInt8]

    init(keyingMaterial: [UInt8], isServer: Bool) {
        let key = Self.keyLength, salt = Self.saltLength
        let clientKey = keyingMaterial[0..<key], serverKey = keyingMaterial[key..<2 * key]
        let clientSalt = keyingMaterial[2 * key..<2 * key + salt], serverSalt = keyingMaterial[2 * key + salt..<2 * (key + salt)]
        let client = Array(clientKey + clientSalt), server = Array(serverKey + serverSalt)
        outbound = isServer ? server : client
        inbound = isServer ? client : server
    }
}
