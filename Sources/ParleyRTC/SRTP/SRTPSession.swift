import CSRTP
import Foundation

/// One direction of a call's SRTP (libsrtp2, AES_CM_128_HMAC_SHA1_80): protects outgoing
/// RTP, or checks and decrypts incoming RTP and RTCP.
///
/// Not thread-safe: used only on the RTC event loop's thread.
final class SRTPSession {
    private var session: srtp_t?

    /// Room libsrtp needs after a packet for its authentication tag.
    static let trailerRoom = Int(SRTP_MAX_TRAILER_LEN)

    /// Initialises libsrtp once per process.
    private static let initialised: Bool = srtp_init() == srtp_err_status_ok

    init(key: [UInt8], inbound: Bool) throws(RTCError) {
        guard Self.initialised else { throw .crypto("srtp_init") }
        var policy = srtp_policy_t()
        srtp_crypto_policy_set_rtp_default(&policy.rtp)
        srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        policy.ssrc.type = inbound ? ssrc_any_inbound : ssrc_any_outbound
        policy.window_size = 1024
        policy.allow_repeat_tx = 0
        var material = key
        let status = material.withUnsafeMutableBufferPointer { buffer in
            policy.key = buffer.baseAddress
            return srtp_create(&session, &policy)
        }
        guard status == srtp_err_status_ok else { throw .crypto("srtp_create (\(status.rawValue))") }
    }

    deinit { if let session { srtp_dealloc(session) } }

    /// Encrypts an RTP packet in place; `packet` must have `trailerRoom` spare capacity.
    func protect(_ packet: inout [UInt8]) -> Bool {
        var length = Int32(packet.count)
        packet += [UInt8](repeating: 0, count: Self.trailerRoom)
        let status = packet.withUnsafeMutableBytes { srtp_protect(session, $0.baseAddress, &length) }
        guard status == srtp_err_status_ok else { return false }
        packet.removeLast(packet.count - Int(length))
        return true
    }

    /// Checks and decrypts an SRTP packet in place; `false` for forged, replayed or malformed ones.
    func unprotect(_ packet: inout [UInt8]) -> Bool {
        var length = Int32(packet.count)
        let status = packet.withUnsafeMutableBytes { srtp_unprotect(session, $0.baseAddress, &length) }
        guard status == srtp_err_status_ok else { return false }
        packet.removeLast(packet.count - Int(length))
        return true
    }

    /// Checks and decrypts an SRTCP packet in place.
    func unprotectControl(_ packet: inout [UInt8]) -> Bool {
        var length = Int32(packet.count)
        let status = packet.withUnsafeMutableBytes { srtp_unprotect_rtcp(session, $0.baseAddress, &length) }
        guard status == srtp_err_status_ok else { return false }
        packet.removeLast(packet.count - Int(length))
        return true
    }
}
