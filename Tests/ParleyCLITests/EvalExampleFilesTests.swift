import Foundation
import Testing
@testable import ParleyCLI

/// The scenario files in `Examples/evals/` and their JSON Schema: the examples read, and the
/// schema (checked by the pinned check-jsonschema) agrees with the reader on them and on a bad file.
@Suite("parley eval example files")
struct EvalExampleFilesTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/evals")
    static let examples = ["backchannels.json", "built-in-tools.json", "handoff.json", "judged.json", "key-presses.json"]

    @Test("every example reads", arguments: examples)
    func reads(example: String) throws {
        let file = try ScenarioDecoder.read(example, relativeTo: Self.directory)
        #expect(!file.scenarios.isEmpty)
    }

    @Test("check-jsonschema passes the examples against the schema and refuses what the reader refuses")
    func schema() async throws {
        let checker = URL(fileURLWithPath: EvalCommandTests.python).deletingLastPathComponent().appendingPathComponent("check-jsonschema")
        try #require(FileManager.default.isExecutableFile(atPath: checker.path), "No check-jsonschema at \(checker.path): run scripts/setup.")
        let schema = Self.directory.appendingPathComponent("scenario.schema.json").path
        let valid = try await ParleyProcess.run(
            program: checker, ["--schemafile", schema] + Self.examples.map { Self.directory.appendingPathComponent($0).path }
        )
        #expect(valid.status == 0, "\(valid.output)\(valid.errorOutput)")

        let work = try TemporaryDirectory()
        defer { work.remove() }
        let bad = #"{"scenarios": [{"name": "a", "turns": [{"text": "hi", "expect": {"tool_called": {"name": 7}}}]}]}"#
        try bad.write(toFile: work.path("bad.json"), atomically: true, encoding: .utf8)
        let refused = try await ParleyProcess.run(program: checker, ["--schemafile", schema, work.path("bad.json")])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(throws: ScenarioFileError.self) { try ScenarioDecoder.read("bad.json", relativeTo: work.url) }
    }
}
