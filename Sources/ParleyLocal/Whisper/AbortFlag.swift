import Foundation

/// A flag set when the task waiting for a blocking C computation is cancelled; the
/// computation polls it through its abort callback.
final class AbortFlag: @unchecked Sendable {  // `lock` guards `aborted`.
    private let lock = NSLock()
    private var aborted = false

    /// Whether the computation should stop.
    var isAborted: Bool { lock.withLock { aborted } }

    /// Asks the computation to stop.
    func abort() { lock.withLock { aborted = true } }
}

/// ggml's abort callback: returns `true` to stop the computation. `userData` is an unretained
/// `AbortFlag` that the caller keeps alive for the duration of the computation.
func abortFlagCallback(_ userData: UnsafeMutableRawPointer?) -> Bool {
    guard let userData else { return false }
    return Unmanaged<AbortFlag>.fromOpaque(userData).takeUnretainedValue().isAborted
}
