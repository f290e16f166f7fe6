/// The nearest-rank percentile of `values`: the smallest value with at least `p` % of the
/// values at or below it (`p` in 0…100; 0 gives the smallest value); `nan` when `values` is empty.
///
/// The rank is ⌈p·n / 100⌉, with p·n formed first, so whole percentiles of whole counts are
/// exact (p7 of 100 values is the 7th, not the 8th as ⌈0.07·100⌉ = ⌈7.000000000000001⌉ gives).
///
/// ```swift
/// percentile([3, 1, 2, 4], 50)  // 2
/// ```
public func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = Int((p * Double(sorted.count) / 100).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
