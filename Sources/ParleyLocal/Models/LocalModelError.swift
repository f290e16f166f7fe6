import Foundation

/// A problem with the files of the embedded stack, explained so a person can fix it.
public enum LocalModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A model file or program is not where it should be.
    case missingFile(kind: String, path: String)
    /// A file exists but the engine could not load it.
    case unloadable(kind: String, path: String)

    public var description: String {
        switch self {
        case let .missingFile(kind, path):
            "The \(kind) is missing: \(path). Run scripts/setup to install it, "
                + "or point PARLEY_MODEL_DIR / PARLEY_LLAMA_SERVER at an existing copy."
        case let .unloadable(kind, path):
            "The \(kind) at \(path) could not be loaded; it may be corrupt. "
                + "Delete it and run scripts/setup again."
        }
    }
}
