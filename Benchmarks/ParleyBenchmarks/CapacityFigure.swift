import BenchmarkHarness

extension BenchmarkResult {
    /// A capacity figure from a search (`CapacitySearch`): the value is the largest count that
    /// held (0 when none did) and the unit says the smallest that failed, as
    /// "`noun` held; smallest failed 140", which the report writes as "largest held 136
    /// `noun`, smallest failed 140". A search coarser than 10 % (a quick run) says so.
    static func capacity<Figures>(
        area: String, name: String, bracket: CapacityBracket<Figures>, noun: String, target: String = "", meetsTarget: Bool? = nil
    ) -> BenchmarkResult {
        let coarse = bracket.precision > 0.1 ? " (bisected only to \(Int(bracket.precision * 100)) %)" : ""
        return BenchmarkResult(
            area: area, name: name, value: Double(bracket.held?.count ?? 0), unit: "\(noun) held; \(bracket.failedSummary)\(coarse)",
            target: target, meetsTarget: meetsTarget
        )
    }
}
