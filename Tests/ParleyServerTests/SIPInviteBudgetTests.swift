import ParleySIP
import Testing

/// The INVITE budget per source address as a table: INVITEs at moments → which were taken.
@Suite struct SIPInviteBudgetTests {
    @Test(arguments: [
        // per second, (source, milliseconds after the start) in order, taken?
        (2, [("a", 0), ("a", 0), ("a", 0), ("a", 0), ("a", 0)], [true, true, true, true, false]),
        (2, [("a", 0), ("a", 0), ("a", 0), ("a", 0), ("a", 500)], [true, true, true, true, true]),
        (2, [("a", 0), ("a", 0), ("a", 0), ("a", 0), ("b", 0)], [true, true, true, true, true]),
        (1, [("a", 0), ("a", 0), ("a", 0), ("a", 999), ("a", 1_000)], [true, true, false, false, true]),
    ])
    func invitesBeyondTheBudgetAreRefused(perSecond: Int, invites: [(String, Int)], taken: [Bool]) {
        var budget = SIPInviteBudget(perSecond: perSecond)
        let start = ContinuousClock.now
        let results = invites.map { source, milliseconds in budget.take(from: source, now: start + .milliseconds(milliseconds)) }
        #expect(results == taken)
    }
}
