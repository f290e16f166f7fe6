import Foundation

/// The `parley` command-line tool.
public enum ParleyCommandLine {
    /// The version printed by `parley --version`.
    public static let version = "0.1.0"

    /// Runs the tool with `arguments` (without the program name) and returns the exit code.
    public static func run(_ arguments: [String]) async -> Int32 {
        if arguments == ["--version"] {
            print("parley \(version)")
            return 0
        }
        FileHandle.standardError.write(Data("parley: not implemented yet\n".utf8))
        return 64
    }
}
