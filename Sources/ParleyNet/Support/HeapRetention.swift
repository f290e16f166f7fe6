import CMalloc
import Foundation

/// Keeps freed heap memory in the process instead of giving it back to the kernel at once.
///
/// By default glibc returns the top of the heap to the kernel as soon as 128 KiB of it is free,
/// and serves blocks of 128 KiB or more by `mmap`, raising those limits only after it sees a
/// large block freed. A server receives and frees messages in bursts (100 WebSockets each
/// echoing 16 KiB free 1.6 MiB at once), so the heap shrank after every burst and the next
/// burst faulted it back in page by page: a tenth of the echo server's time went to page
/// faults, and its round trips took about twice as long as the raw libwebsockets server's.
/// Fixed limits at the top of glibc's own range (32 MiB for `mmap`, 64 MiB kept free) remove
/// those faults. Settings the user made (`GLIBC_TUNABLES`, `MALLOC_*_`) are left alone.
enum HeapRetention {
    /// Applies the limits the first time it is read (each server start reads it).
    static let applied: Void = {
        #if canImport(Glibc)
        let environment = ProcessInfo.processInfo.environment
        let userTuned = environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.") == true
            || environment.keys.contains { $0.hasPrefix("MALLOC_") && $0.hasSuffix("_") }
        guard !userTuned else { return }
        _ = mallopt(M_MMAP_THRESHOLD, 32 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 64 << 20)
        #endif
    }()
}
