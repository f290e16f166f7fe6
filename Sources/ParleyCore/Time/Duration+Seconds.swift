import Foundation

extension Duration {
    /// The duration in seconds as a `TimeInterval`.
    public var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration for messages, like `30 s` or `2.5 s`.
    public var secondsText: String {
        let value = timeInterval
        return value.rounded() == value ? "\(Int(value)) s" : String(format: "%.3g s", value)
    }
}
