import Foundation
import Testing
@testable import ParleyCore

/// G.711 against CPython's `audioop`, every 16-bit sample and every code of both laws.
@Suite struct G711Tests {
    @Test func everySampleAndCodeMatchesAudioop() async throws {
        let everySample = (Int(Int16.min)...Int(Int16.max)).map { Int16($0) }
        let encoded = G711.encode(everySample, law: .muLaw) + G711.encode(everySample, law: .aLaw)
        let codes = (0...255).map { UInt8($0) }
        let decoded = G711.decode(codes, law: .muLaw) + G711.decode(codes, law: .aLaw)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("g711-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let encodedFile = folder.appendingPathComponent("encoded")
        let decodedFile = folder.appendingPathComponent("decoded")
        try Data(encoded).write(to: encodedFile)
        try decoded.map { $0.littleEndian }.withUnsafeBytes { Data($0) }.write(to: decodedFile)
        let result = try await PythonScript.run("g711_reference.py", arguments: [encodedFile.path, decodedFile.path])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
    }

    @Test func decodingThenEncodingGivesTheSameCodes() {
        for law in [G711.Law.muLaw, .aLaw] {
            let codes = (0...255).map { UInt8($0) }
            let again = G711.encode(G711.decode(codes, law: law), law: law)
            // μ-law has two codes for zero (0x7F and 0xFF); every other code comes back as itself.
            let differing = zip(codes, again).filter { $0 != $1 }.map(\.0)
            #expect(differing.allSatisfy { law == .muLaw && $0 == 0x7F }, "\(law): \(differing)")
        }
    }
}
