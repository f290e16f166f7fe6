@testable import ParleyServer
@testable import ParleySIP
import Testing

/// Calls Parley places, without a network: whom `to` names, and what a final status means.
@Suite struct SIPDialTests {
    @Test(arguments: [
        // to, trunk, the URI called (nil: refused)
        ("+14155550123", "sip:sip.example.com", "sip:+14155550123@sip.example.com"),
        ("+14155550123", "sip:203.0.113.5:5060;transport=tcp", "sip:+14155550123@203.0.113.5:5060"),
        ("sip:alice@pbx.example.com", "sip:sip.example.com", "sip:alice@pbx.example.com"),
        ("sips:alice@pbx.example.com:5061", "sip:sip.example.com", "sips:alice@pbx.example.com:5061"),
        ("tel:+14155550123", "sip:sip.example.com", nil),
        ("4155550123", "sip:sip.example.com", nil),
        ("sip:pbx.example.com", "sip:sip.example.com", nil),
        ("sip:a@b>\r\nX-Injected: 1", "sip:sip.example.com", nil),
        ("sip:\"alice\"@b", "sip:sip.example.com", nil),
    ] as [(String, String, String?)])
    func theTargetURIOfARequest(to: String, trunk: String, uri: String?) {
        #expect(SIPOutboundCalls.targetURI(for: to, trunk: trunk) == uri)
    }

    @Test(arguments: [
        (486, SIPDialFailure.busy(status: 486)),
        (600, .busy(status: 600)),
        (408, .noAnswer(status: 408)),
        (480, .noAnswer(status: 480)),
        (404, .rejected(status: 404, reason: "Not Found")),
        (603, .rejected(status: 603, reason: "Not Found")),
        (503, .failed(status: 503, reason: "Not Found")),
    ])
    func aFinalStatusMeans(status: Int, failure: SIPDialFailure) {
        #expect(SIPDialFailure(status: status, reason: "Not Found") == failure)
    }

    @Test func theUserAndHostOfADial() {
        let dial = SIPDial(target: "sip:+14155550123@pbx.example.com:5060", trunk: "sip:[2001:db8::5]:5060;transport=tcp", caller: "parley")
        #expect(dial.targetUser == "+14155550123")
        #expect(dial.peerHost == "2001:db8::5")
        #expect(SIPDial(target: "sip:bob@203.0.113.9;transport=tcp", caller: "parley").peerHost == "203.0.113.9")
    }
}
