import Foundation

/// How long recordings are kept and how much disk they may take together; `RecordingHousekeeping`
/// removes what is beyond either.
public struct RecordingLimits: Sendable, Hashable {
    /// Days a recording is kept after it was last written (`PARLEY_RECORDINGS_RETENTION_DAYS`,
    /// default 30); `nil` keeps it until its conversation is deleted (`0` or `forever`).
    public var retentionDays: Int? = 30
    /// The most bytes all recordings may take together (`PARLEY_RECORDINGS_QUOTA_MB`, in MB of
    /// 1,048,576 bytes, default 1024); beyond it the oldest go first. `nil` for no quota (`0` or `unlimited`).
    public var quotaBytes: Int? = 1_024 * bytesPerMB

    /// Bytes in one MB of `PARLEY_RECORDINGS_QUOTA_MB`.
    static let bytesPerMB = 1 << 20

    /// Creates the default limits: 30 days, 1024 MB.
    public init() {}

    /// The retention period in seconds, when there is one.
    var retentionSeconds: TimeInterval? { retentionDays.map { TimeInterval($0) * 86_400 } }

    /// Reads `PARLEY_RECORDINGS_RETENTION_DAYS` and `PARLEY_RECORDINGS_QUOTA_MB` through `value`.
    static func load(_ value: (String) -> String?, problems: inout [String]) -> RecordingLimits {
        var limits = RecordingLimits()
        if let raw = value("PARLEY_RECORDINGS_RETENTION_DAYS") {
            switch (raw.lowercased(), Int(raw)) {
            case ("forever", _), (_, 0?): limits.retentionDays = nil
            case (_, let days?) where (1...36_500).contains(days): limits.retentionDays = days
            default: problems.append("PARLEY_RECORDINGS_RETENTION_DAYS: \"\(raw)\" is not a whole number of days from 1 to 36500, 0 or forever")
            }
        }
        if let raw = value("PARLEY_RECORDINGS_QUOTA_MB") {
            switch (raw.lowercased(), Int(raw)) {
            case ("unlimited", _), (_, 0?): limits.quotaBytes = nil
            case (_, let megabytes?) where (1...100_000_000).contains(megabytes): limits.quotaBytes = megabytes * bytesPerMB
            default: problems.append("PARLEY_RECORDINGS_QUOTA_MB: \"\(raw)\" is not a whole number of MB from 1 to 100000000, 0 or unlimited")
            }
        }
        return limits
    }
}
