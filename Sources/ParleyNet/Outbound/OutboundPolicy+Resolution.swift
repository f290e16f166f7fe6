import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension OutboundPolicy {
    /// Resolves `host` and checks every address it has: the addresses to connect to, in the
    /// resolver's order of preference, once none of them is refused.
    /// - Throws: `HTTPClientError` `.addressRefused` naming the first refused address, or
    ///   `.connectionFailed` when the name does not resolve.
    func checkedAddresses(forHost host: String) async throws(HTTPClientError) -> [IPAddress] {
        let addresses = try await Self.resolve(host)
        for address in addresses {
            guard let kind = refusal(of: address) else { continue }
            let literal = IPAddress(host) == address
            throw HTTPClientError(.addressRefused, message: literal ? "\(address) is \(kind)" : "\(host) resolves to \(address), \(kind)")
        }
        return addresses
    }

    /// Every address of `host` (a name or a numeric address), from `getaddrinfo` on a thread of
    /// its own: the lookup blocks, and the concurrency pool's threads must not.
    private static func resolve(_ host: String) async throws(HTTPClientError) -> [IPAddress] {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[IPAddress], HTTPClientError>, Never>) in
            Thread.detachNewThread { continuation.resume(returning: lookUp(bare)) }
        }
        return try result.get()
    }

    private static func lookUp(_ host: String) -> Result<[IPAddress], HTTPClientError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else {
            let reason = String(cString: gai_strerror(status))
            return .failure(HTTPClientError(.connectionFailed, message: "cannot resolve \(host): \(reason)"))
        }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry?.pointee {
            entry = current.ai_next
            guard let socketAddress = current.ai_addr else { continue }
            let address: IPAddress
            switch Int32(current.ai_family) {
            case AF_INET:
                address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    var raw = pointer.pointee.sin_addr
                    return IPAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) })
                }
            case AF_INET6:
                address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var raw = pointer.pointee.sin6_addr
                    return IPAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) })
                }
            default:
                continue
            }
            if !addresses.contains(address) { addresses.append(address) }
        }
        guard !addresses.isEmpty else { return .failure(HTTPClientError(.connectionFailed, message: "\(host) has no address")) }
        return .success(addresses)
    }
}
