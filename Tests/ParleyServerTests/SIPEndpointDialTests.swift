import Foundation
import ParleyNet
import ParleySIP
import Testing

/// Placing calls with the SIP endpoint itself: what it refuses with nobody answering, and closing
/// while the BYEs of answered calls still wait for their answers.
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

    /// Closing both ends right after a call hangs up, its BYE unanswered yet, once freed libre's
    /// transactions under their running timers: the process crashed a few calls later (every
    /// release run of the `sip` benchmark did). A crash or a dial that fails here is the regression.
    @Test func closingRightAfterAHangUpLeavesTheSIPStackSound() async throws {
        for round in 1...5 {
            var answering = SIPEndpoint.Settings()
            answering.port = 0
            answering.policy = SIPTrunkPolicy(allowedAddresses: [try IPAddressRange("127.0.0.1")])
            let door = try SIPEndpoint(settings: answering) { _ in }
            var placing = SIPEndpoint.Settings()
            placing.port = 0
            let caller = try SIPEndpoint(settings: placing) { _ in }
            let answerer = Task {
                for await call in door.incoming { call.answer() }
            }
            let call = try caller.dial(SIPDial(target: "sip:+15005550006@127.0.0.1:\(door.port)", caller: "parley"))
            var answered = false
            for await progress in call.dialProgress {
                if case .answered = progress { answered = true }
            }
            #expect(answered, "round \(round): the call was not answered")
            call.hangUp()
            caller.close()
            door.close()
            answerer.cancel()
        }
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
