import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits until `socket` has something to read (or its peer closed it) or `deadline` passes;
/// `false` when the deadline passed first. A signal interrupting the wait resumes it.
func waitUntilReadable(_ socket: Int32, before deadline: ContinuousClock.Instant) -> Bool {
    while true {
        let remaining = ContinuousClock.now.duration(to: deadline)
        let milliseconds = Int32(max(0, remaining.components.seconds * 1_000 + remaining.components.attoseconds / 1_000_000_000_000_000))
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 && errno == EINTR { continue }
        return ready > 0
    }
}
