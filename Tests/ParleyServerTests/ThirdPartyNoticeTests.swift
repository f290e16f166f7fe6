import Foundation
import Testing

/// `THIRD-PARTY.md` names exactly the packages the setup scripts, the benchmark script and
/// `Package.swift` install or link, so the notice stays true as dependencies change.
@Suite struct ThirdPartyNoticeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// A package name as pip or apt spell it: lower case, `_` as `-`, without extras or version.
    static func normalized(_ name: String) -> String {
        let bare = name.prefix { $0 != "[" && $0 != "=" }
        return bare.lowercased().replacingOccurrences(of: "_", with: "-")
    }

    /// The words of a bash array `NAME=( … )`, comments and quotes dropped.
    static func bashArray(_ name: String, in script: String) -> [String] {
        guard let start = script.range(of: "\(name)=(") else { return [] }
        var words: [String] = []
        for line in script[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            let code = line.prefix { $0 != "#" }
            words += code.prefix { $0 != ")" }.split(separator: " ").map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" \t"))
            }.filter { !$0.isEmpty }
            if code.contains(")") { break }
        }
        return words
    }

    /// Every match of `pattern`'s first capture group in `text`.
    static func captures(_ pattern: String, in text: String) throws -> [String] {
        let expression = try NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// What the repository installs, links or downloads.
    static func usedPackages() throws -> Set<String> {
        let setup = try text("scripts/setup")
        let embedded = try text("scripts/setup-embedded")
        let bench = try text("scripts/bench")
        // Running's packages and the tests' own (scripts/setup --run installs only the former).
        var names = bashArray("RUN_DEBIAN_PACKAGES", in: setup) + bashArray("TEST_DEBIAN_PACKAGES", in: setup)
        names += bashArray("RUN_PYTHON_PACKAGES", in: setup) + bashArray("TEST_PYTHON_PACKAGES", in: setup)
        names += bashArray("PIPECAT_PACKAGES", in: bench) + bashArray("LOADCLIENT_PACKAGES", in: bench)
        names += try captures(#"fetch_wheel "([^"=]+)=="#, in: embedded)
        names += try captures(#"/([A-Za-z0-9_.-]+)-[0-9][0-9.]*\.tar\.gz\n"#, in: embedded)
        names += try captures(#"(?m)^[A-Z_]+_PACKAGE=([a-z0-9.+-]+)$"#, in: embedded)
        names += try captures(#"apt: \[((?:"[^"]*",? ?)*)\]"#, in: try text("Package.swift"))
            .flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }
        return Set(names.filter { !$0.isEmpty && !$0.hasPrefix("$") }.map { normalized($0) })
    }

    /// The packages the notice lists: the first cell of each table row, in backticks.
    static func listedPackages() throws -> Set<String> {
        Set(try captures(#"(?m)^\| `([^`]+)` \|"#, in: try text("THIRD-PARTY.md")).map { normalized($0) })
    }

    @Test func theNoticeListsExactlyThePackagesInUse() throws {
        let used = try Self.usedPackages()
        let listed = try Self.listedPackages()
        #expect(used.count > 20, "found only \(used.sorted())")
        #expect(used.subtracting(listed).isEmpty, "used but not in THIRD-PARTY.md: \(used.subtracting(listed).sorted())")
        #expect(listed.subtracting(used).isEmpty, "in THIRD-PARTY.md but no longer used: \(listed.subtracting(used).sorted())")
    }

    @Test func theLicenceIsApache2() throws {
        let licence = try Self.text("LICENSE")
        #expect(licence.contains("Apache License") && licence.contains("Version 2.0, January 2004"))
    }
}
