import Foundation
import Testing
@testable import ParleyNet

/// `IPAddressRange` (CIDR blocks) and `OutboundPolicy`, as tables: no sockets.
@Suite struct OutboundPolicyTests {
    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"), ("172.16.0.0/12", "172.16.0.0/12"), ("127.0.0.1", "127.0.0.1/32"),
        (" 192.168.1.0/24 ", "192.168.1.0/24"), ("0.0.0.0/0", "0.0.0.0/0"), ("fd00::/8", "fd00::/8"),
        ("::1", "::1/128"), ("[fe80::]/10", "fe80::/10"), ("::ffff:127.0.0.1/128", "::ffff:127.0.0.1/128"),
    ])
    func parsesCIDRBlocks(text: String, expected: String) throws {
        #expect(try IPAddressRange(text).description == expected)
    }

    @Test(arguments: [
        ("10.0.0.0/33", #""10.0.0.0/33": the prefix length must be a whole number from 0 to 32"#),
        ("fd00::/129", #""fd00::/129": the prefix length must be a whole number from 0 to 128"#),
        ("10.0.0.0/-1", #""10.0.0.0/-1": the prefix length must be a whole number from 0 to 32"#),
        ("10.0.0.0/", #""10.0.0.0/": the prefix length must be a whole number from 0 to 32"#),
        ("10.0.0.1/8", #""10.0.0.1/8" has bits set past its /8 prefix; did you mean 10.0.0.0/8?"#),
        ("fe80::1/10", #""fe80::1/10" has bits set past its /10 prefix; did you mean fe80::/10?"#),
        ("localhost", #""localhost" is not an IP address or CIDR block (such as 10.0.0.0/8 or fd00::/8)"#),
        ("10.0.0/8", #""10.0.0/8" is not an IP address or CIDR block (such as 10.0.0.0/8 or fd00::/8)"#),
        ("10.0.0.0/8/8", #""10.0.0.0/8/8" is not an IP address or CIDR block (such as 10.0.0.0/8 or fd00::/8)"#),
    ])
    func refusesWhatIsNoCIDRBlock(text: String, message: String) {
        #expect { try IPAddressRange(text) } throws: { ($0 as? IPAddressRange.ParseError)?.description == message }
    }

    @Test func containsItsAddressesOnly() throws {
        let block = try IPAddressRange("172.16.0.0/12")
        #expect(block.contains(IPAddress("172.16.0.0")!))
        #expect(block.contains(IPAddress("172.31.255.255")!))
        #expect(!block.contains(IPAddress("172.32.0.0")!))
        #expect(!block.contains(IPAddress("172.15.255.255")!))
        #expect(!block.contains(IPAddress("::ffff:172.16.0.1")!), "another family is never inside")
        #expect(try IPAddressRange("0.0.0.0/0").contains(IPAddress("203.0.113.9")!))
        #expect(try IPAddressRange("fe80::/10").contains(IPAddress("febf:ffff::1")!))
        #expect(try !IPAddressRange("fe80::/10").contains(IPAddress("fec0::1")!))
    }

    @Test func readsAndWritesAddresses() {
        #expect(IPAddress("169.254.169.254")?.description == "169.254.169.254")
        #expect(IPAddress("[::1]")?.description == "::1")
        #expect(IPAddress("0:0:0:0:0:ffff:7f00:1")?.description == "::ffff:127.0.0.1")
        #expect(IPAddress("169.254.169.254")?.isIPv4 == true)
        #expect(IPAddress("fd00:ec2::254")?.isIPv4 == false)
        for text in ["localhost", "", "1.2.3", "1.2.3.4.5", "::1%lo", "example.com"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
    }

    /// Each non-public block refused, at its edges, with the words the error uses.
    @Test(arguments: [
        ("0.0.0.0", "an unspecified address"), ("0.255.255.255", "an unspecified address"),
        ("10.0.0.1", "a private address"), ("10.255.255.255", "a private address"),
        ("100.64.0.1", "a shared (carrier-grade NAT) address"), ("100.127.255.255", "a shared (carrier-grade NAT) address"),
        ("127.0.0.1", "a loopback address"), ("127.1.2.3", "a loopback address"),
        ("169.254.169.254", "a cloud metadata address"), ("169.254.0.1", "a link-local address"),
        ("172.16.0.1", "a private address"), ("172.31.255.255", "a private address"),
        ("192.168.0.1", "a private address"), ("192.168.255.255", "a private address"),
        ("224.0.0.1", "a multicast address"), ("239.255.255.250", "a multicast address"),
        ("240.0.0.1", "a reserved or broadcast address"), ("255.255.255.255", "a reserved or broadcast address"),
        ("::", "an unspecified address"), ("::1", "a loopback address"), ("::10.0.0.1", "an IPv4-compatible address"),
        ("fd00:ec2::254", "a cloud metadata address"), ("fc00::1", "a unique-local address"), ("fdff::1", "a unique-local address"),
        ("fe80::1", "a link-local address"), ("febf::1", "a link-local address"), ("fec0::1", "a site-local address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:127.0.0.1", "a loopback address"), ("::ffff:10.0.0.1", "a private address"),
        ("::ffff:169.254.169.254", "a cloud metadata address"), ("::ffff:0.0.0.0", "an unspecified address"),
        ("64:ff9b::a9fe:a9fe", "a cloud metadata address"), ("64:ff9b::c0a8:101", "a private address"),
    ])
    func refusesNonPublicAddresses(address: String, kind: String) {
        #expect(OutboundPolicy().refusal(of: IPAddress(address)!) == kind)
    }

    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "11.0.0.1", "100.63.255.255", "100.128.0.1", "126.255.255.255", "128.0.0.1",
        "169.253.255.255", "169.255.0.1", "172.15.255.255", "172.32.0.1", "192.167.255.255", "192.169.0.1",
        "223.255.255.255", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
    ])
    func letsPublicAddressesThrough(address: String) {
        #expect(OutboundPolicy().refusal(of: IPAddress(address)!) == nil)
    }

    @Test func theAllowListOpensItsBlocksOnly() throws {
        let policy = OutboundPolicy(allowing: [try IPAddressRange("127.0.0.1/32"), try IPAddressRange("10.1.0.0/16"), try IPAddressRange("fd12::/16")])
        #expect(policy.refusal(of: IPAddress("127.0.0.1")!) == nil)
        #expect(policy.refusal(of: IPAddress("::ffff:127.0.0.1")!) == nil, "the IPv4-mapped form of an allowed address is allowed")
        #expect(policy.refusal(of: IPAddress("127.0.0.2")!) == "a loopback address")
        #expect(policy.refusal(of: IPAddress("::1")!) == "a loopback address", "allowing 127.0.0.1 does not allow ::1")
        #expect(policy.refusal(of: IPAddress("10.1.255.255")!) == nil)
        #expect(policy.refusal(of: IPAddress("10.2.0.1")!) == "a private address")
        #expect(policy.refusal(of: IPAddress("fd12::9")!) == nil)
        #expect(policy.refusal(of: IPAddress("fd13::9")!) == "a unique-local address")
        #expect(policy.refusal(of: IPAddress("169.254.169.254")!) == "a cloud metadata address")
    }

    @Test func resolvingChecksEveryAddressOfAName() async throws {
        await #expect { try await OutboundPolicy().checkedAddresses(forHost: "localhost") } throws: { error in
            let error = error as? HTTPClientError
            return error?.kind == .addressRefused && error?.message.hasPrefix("localhost resolves to ") == true
                && error?.message.hasSuffix(", a loopback address") == true
        }
        await #expect { try await OutboundPolicy().checkedAddresses(forHost: "169.254.169.254") } throws: { error in
            (error as? HTTPClientError)?.message == "169.254.169.254 is a cloud metadata address"
        }
        await #expect { try await OutboundPolicy().checkedAddresses(forHost: "[::ffff:10.0.0.1]") } throws: { error in
            (error as? HTTPClientError)?.message == "::ffff:10.0.0.1 is a private address"
        }
        // Numeric forms the resolver reads as 127.0.0.1 are judged by that address.
        for obscure in ["2130706433", "0x7f.1", "127.1"] {
            await #expect { try await OutboundPolicy().checkedAddresses(forHost: obscure) } throws: { error in
                (error as? HTTPClientError)?.message == "\(obscure) resolves to 127.0.0.1, a loopback address"
            }
        }
        // Allowing one of localhost's addresses is not enough when it has another.
        let loopbackV4 = OutboundPolicy(allowing: [try IPAddressRange("127.0.0.0/8")])
        let both = OutboundPolicy(allowing: [try IPAddressRange("127.0.0.0/8"), try IPAddressRange("::1")])
        let addresses = try await both.checkedAddresses(forHost: "localhost")
        #expect(addresses.contains(IPAddress("127.0.0.1")!))
        if addresses.contains(IPAddress("::1")!) {
            await #expect(throws: HTTPClientError.self) { try await loopbackV4.checkedAddresses(forHost: "localhost") }
        }
        #expect(try await OutboundPolicy().checkedAddresses(forHost: "203.0.113.7") == [IPAddress("203.0.113.7")!])
    }
}
