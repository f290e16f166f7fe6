import Foundation
import Testing
@testable import ParleyCLI

@Suite("Progress indicator")
struct ProgressIndicatorTests {
    @Test("on a terminal: a spinner with the label, erased when the work is done")
    func terminal() async throws {
        let (context, output, errorOutput) = CommandRun.capturing(terminal: true)
        let value = try await context.withProgress("Loading the speech model") { 42 }
        #expect(value == 42)
        #expect(errorOutput.value.hasPrefix("\r\u{1B}[K⠋ Loading the speech model… 0s"))
        #expect(errorOutput.value.hasSuffix("\r\u{1B}[K"))
        #expect(output.value.isEmpty)
    }

    @Test("erased as well when the work fails")
    func failure() async {
        let (context, _, errorOutput) = CommandRun.capturing(terminal: true)
        await #expect(throws: CommandFailure("no")) {
            try await context.withProgress("Working") { throw CommandFailure("no") }
        }
        #expect(errorOutput.value.hasSuffix("\r\u{1B}[K"))
    }

    @Test("nothing on a pipe, with NO_COLOR, or with TERM=dumb", arguments: [
        (false, [String: String]()), (true, ["NO_COLOR": "1"]), (true, ["TERM": "dumb"]),
    ])
    func silent(terminal: Bool, environment: [String: String]) async throws {
        let (context, output, errorOutput) = CommandRun.capturing(environment: environment, terminal: terminal)
        try await context.withProgress("Working") {}
        #expect(errorOutput.value.isEmpty)
        #expect(output.value.isEmpty)
    }
}
