import Foundation

/// Where a command writes text: standard output, standard error, or a buffer in tests.
struct TextOutput: Sendable {
    /// Whether the text goes to a terminal (colours and progress are allowed there).
    let isTerminal: Bool
    private let sink: @Sendable (String) -> Void

    /// Creates an output that hands every write to `sink`.
    init(isTerminal: Bool, sink: @escaping @Sendable (String) -> Void) {
        self.isTerminal = isTerminal
        self.sink = sink
    }

    /// Writes `text` as is.
    func write(_ text: String) {
        sink(text)
    }

    /// Writes `text` and a newline.
    func line(_ text: String = "") {
        sink(text + "\n")
    }

    /// An output writing straight (unbuffered) to a file descriptor of this process.
    static func fileDescriptor(_ descriptor: Int32) -> TextOutput {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        // A closed pipe (`parley transcribe … | head`) ends the output; there is nobody left to tell.
        return TextOutput(isTerminal: isatty(descriptor) == 1) { text in
            try? handle.write(contentsOf: Data(text.utf8))
        }
    }
}
