import Foundation
import ParleySIP
import Testing

/// Placing calls with the SIP endpoint itself, with nobody answering: what it refuses.
@Suite struct SIPEndpointDialTests {
    @Test func dialsBeyondTheRingingLimitAreRefused() throws {
        var settings = SIPEndpoint.Settings()
        settings.port = 0
        settings.maximumRingingCalls = 1
        let endpoint = try SIPEndpoint(settings: settings) { _ in }
        defer { endpoint.close() }
        // A port nobody answers on: the first call keeps trying, and rings as far as the endpoint knows.
        let silent = try SIPp.freeUDPPort()
        let first = try endpoint.dial(SIPDial(target: "sip:+15005550006@127.0.0.1:\(silent)", caller: "parley"))
        #expect(!first.id.isEmpty)
        let refused = #expect(throws: SIPEndpoint.DialError.self) {
            try endpoint.dial(SIPDial(target: "sip:+15005550007@127.0.0.1:\(silent)", caller: "parley"))
        }
        #expect(refused?.tooManyCalls == true, "\(String(describing: refused))")
        first.hangUp()
    }

    @Test(arguments: ["sip:a@b>\r\nX-Injected: 1", "sip:\"quoted\"@example.com", ""])
    func aTargetThatCannotGoInAHeaderIsRefused(target: String) throws {
        var settings = SIPEndpoint.Settings()
        settings.port = 0
        let endpoint = try SIPEndpoint(settings: settings) { _ in }
        defer { endpoint.close() }
        #expect(throws: SIPEndpoint.DialError.self) { try endpoint.dial(SIPDial(target: target, caller: "parley")) }
    }
}
