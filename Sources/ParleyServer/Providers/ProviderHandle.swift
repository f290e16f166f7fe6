import Foundation

/// Where sessions find the providers: empty while they load at start, then set once.
///
/// `@unchecked Sendable`: `providers` is guarded by `lock`.
public final class ProviderHandle: @unchecked Sendable {
    private let lock = NSLock()
    private var providers: ProviderSet?

    /// Creates a handle, empty or already holding `providers`.
    public init(_ providers: ProviderSet? = nil) { self.providers = providers }

    /// The providers, or `nil` while they are still loading.
    public var current: ProviderSet? { lock.withLock { providers } }

    /// Makes the providers available.
    public func set(_ providers: ProviderSet) { lock.withLock { self.providers = providers } }
}
