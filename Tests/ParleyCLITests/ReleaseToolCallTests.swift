import Foundation
import ParleyCore
import ParleyTesting
import Testing

/// `parley chat` as a process, its model asking for the built-in `get_current_time`: the
/// release build crashed here (a task-local holding an optional closure, see
/// `ToolProgress.reporter`). `scripts/test` runs this suite against the release build.
@Suite("Release: parley chat runs a built-in tool")
struct ReleaseToolCallTests {
    @Test("a tool call through parley chat answers and exits cleanly")
    func chatRunsATool() async throws {
        let upstream = try FakeOpenAIServer()
        upstream.setChatResponder(FakeConversationalChat.reply(to:))
        let run = try await ParleyProcess.run(
            ["chat"], environment: ProviderCommandTests.environment(upstream), input: Data("What time is it?\n".utf8)
        )
        await upstream.shutdown()
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.errorOutput.contains("→ get_current_time"), "\(run.errorOutput)")
        #expect(run.errorOutput.contains("← get_current_time done"), "\(run.errorOutput)")
        #expect(run.output.hasPrefix("The tool said: "), "\(run.output)")
        let toolResults = upstream.requests.compactMap(\.json).flatMap { $0["messages"]?.arrayValue ?? [] }
            .filter { $0["role"]?.stringValue == "tool" }
        #expect(toolResults.count == 1)
    }
}

extension JSONValue {
    /// The elements of an array, `nil` for anything else.
    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }
}
