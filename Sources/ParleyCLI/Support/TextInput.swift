import Foundation

/// Where a command reads text from: standard input, or a fixed text in tests.
struct TextInput: Sendable {
    /// Whether the input is a terminal (a person typing) rather than a pipe or file.
    let isTerminal: Bool
    /// Reads everything up to the end, refusing more than `limit` bytes.
    let readAll: @Sendable (_ limit: Int) async throws -> Data
    /// The input's lines, without their line endings, as they arrive.
    let lines: @Sendable () -> AsyncStream<String>

    /// Standard input of this process. Reads happen on a thread of their own, so a person
    /// who types slowly never blocks the concurrency pool.
    static let standardInput = TextInput(
        isTerminal: isatty(STDIN_FILENO) == 1,
        readAll: { limit in
            try await BlockingRead.run {
                var data = Data()
                while let chunk = try FileHandle.standardInput.read(upToCount: 64 * 1024), !chunk.isEmpty {
                    data.append(chunk)
                    guard data.count <= limit else { throw CommandFailure("standard input is larger than \(limit / 1024) KB") }
                }
                return data
            }
        },
        lines: {
            let (lines, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(64))
            let reader = Thread {
                while let line = readLine(strippingNewline: true) {
                    continuation.yield(line.hasSuffix("\r") ? String(line.dropLast()) : line)
                }
                continuation.finish()
            }
            reader.start()
            return lines
        }
    )

    /// Input that holds `text`: what in-process runs of the tool (its tests) read.
    static func text(_ text: String, isTerminal: Bool = false) -> TextInput {
        TextInput(
            isTerminal: isTerminal,
            readAll: { limit in
                let data = Data(text.utf8)
                guard data.count <= limit else { throw CommandFailure("standard input is larger than \(limit / 1024) KB") }
                return data
            },
            lines: {
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                let complete = text.hasSuffix("\n") ? lines.dropLast() : lines[...]
                return AsyncStream(String.self, bufferingPolicy: .unbounded) { continuation in
                    for line in complete { continuation.yield(line) }
                    continuation.finish()
                }
            }
        )
    }
}

/// Runs blocking reads on a thread of their own and hands the result back to async code.
enum BlockingRead {
    /// Runs `body` on a new thread.
    static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}
