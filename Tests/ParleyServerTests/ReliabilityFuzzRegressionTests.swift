import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import Testing

/// What the fuzz targets (Fuzz/Targets) found, kept as ordinary tests; and the seed corpora
/// (Fuzz/Corpus) replayed through the same entry points, so every `swift test` run feeds them
/// the hostile inputs too.
@Suite("Reliability: fuzz regressions and seed corpora")
struct ReliabilityFuzzRegressionTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/Corpus").standardizedFileURL

    /// The seed inputs of one fuzz target.
    static func seeds(_ target: String) throws -> [Data] {
        let folder = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { try Data(contentsOf: $0) }
    }

    @Test("found by jwt-verifier: a signature with its unused low bits set no longer verifies")
    func malleableSignatureIsRefused() throws {
        // The fuzzer's input: the valid seed token with its last signature character `U` spelled `W`.
        let authority = ClientTokenAuthority(secret: "parley-fuzz-secret-0123456789abcdef")
        let now = Date(timeIntervalSince1970: 1_735_689_600)
        let found = try #require(String(data: Data(contentsOf: Self.corpus.appendingPathComponent("jwt-verifier/regression-malleable-signature.txt")), encoding: .utf8))
        #expect(throws: ClientTokenError.malformed) { try authority.verify(found, now: now) }
        let canonical = String(found.dropLast()) + "U"
        #expect(try authority.verify(canonical, now: now).subject == "user-1")
    }

    @Test("found by sentence-segmenter: a combining mark after a space goes with the space; all other text is kept")
    func whitespaceLedClusterIsDroppedAsWhitespace() {
        var segmenter = SentenceSegmenter()
        let text = "Hello there. \u{64F}Next one here."
        let chunks = segmenter.append(text) + segmenter.flush()
        #expect(chunks == ["Hello there.", "Next one here."])
    }

    @Test("seed corpora decode or fail with typed errors, and decoded events round-trip")
    func seedCorporaAreHandled() throws {
        var counts: [String: Int] = [:]
        for seed in try Self.seeds("realtime-events") {
            let text = String(decoding: seed, as: UTF8.self)
            for dialect in RealtimeDialect.allCases {
                if let event = try? RealtimeClientEvent.decode(text, dialect: dialect) {
                    let once = try? RealtimeClientEvent.decode(event.encode(dialect: dialect), dialect: dialect)
                    #expect(once != nil && once.map { (try? RealtimeClientEvent.decode($0.encode(dialect: dialect), dialect: dialect)) == $0 } == true)
                }
            }
            _ = try? RealtimeServerEvent.decode(text)
            counts["realtime-events", default: 0] += 1
        }
        for seed in try Self.seeds("wav-reader") {
            if let wav = try? WAVFile.read(seed) {
                #expect(wav.samples.count % wav.format.channelCount == 0 && wav.samples.count <= seed.count)
            }
            counts["wav-reader", default: 0] += 1
        }
        for seed in try Self.seeds("sse-parser") {
            var whole = ServerSentEventParser(maxEventBytes: 256)
            var split = ServerSentEventParser(maxEventBytes: 256)
            let body = seed.dropFirst()
            let cut = body.startIndex + Int(seed.first ?? 0) % (body.count + 1)
            let one = (try? whole.push(body)).map { $0 + whole.finish() }
            let two = (try? split.push(body[..<cut])).flatMap { first in (try? split.push(body[cut...])).map { first + $0 + split.finish() } }
            #expect(one == two)
            counts["sse-parser", default: 0] += 1
        }
        let authority = ClientTokenAuthority(secret: "parley-fuzz-secret-0123456789abcdef")
        let fuzzNow = Date(timeIntervalSince1970: 1_735_689_600)
        var verified = 0
        for seed in try Self.seeds("jwt-verifier") {
            if (try? authority.verify(String(decoding: seed, as: UTF8.self), now: fuzzNow)) != nil { verified += 1 }
            counts["jwt-verifier", default: 0] += 1
        }
        #expect(verified == 4, "only the four genuine seed tokens (two JWTs, two compact) verify")
        for seed in try Self.seeds("sentence-segmenter") {
            var segmenter = SentenceSegmenter()
            let text = String(decoding: seed.dropFirst(), as: UTF8.self)
            let chunks = segmenter.append(text) + segmenter.flush()
            #expect(chunks.allSatisfy { !$0.isEmpty && $0 == $0.trimmingCharacters(in: .whitespacesAndNewlines) })
            #expect(chunks.joined().filter { !$0.isWhitespace } == text.filter { !$0.isWhitespace })
            counts["sentence-segmenter", default: 0] += 1
        }
        #expect(counts.values.allSatisfy { $0 >= 5 }, "\(counts)")
    }
}
