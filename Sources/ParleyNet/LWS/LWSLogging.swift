import CLibWebsockets
import Foundation

/// Sets libwebsockets' process-wide log level once: errors only, or the bit mask in the
/// environment variable `PARLEY_LWS_LOG` (for example `15` for errors to notices).
enum LWSLogging {
    private static let configured: Void = {
        let level = ProcessInfo.processInfo.environment["PARLEY_LWS_LOG"].flatMap { Int32($0) } ?? Int32(LLL_ERR)
        lws_set_log_level(level, nil)
    }()

    /// Applies the log level (idempotent).
    static func configure() {
        _ = configured
    }
}
