import Foundation
import ParleyServer

extension CommandContext {
    /// The `.env` file commands read from the working directory, as `parley serve` does.
    static let dotEnvFileName = ".env"

    /// This context with the values of `./.env` (when there is one) added beneath the
    /// environment's own, which win.
    /// - Throws: `CommandFailure` when the file cannot be read or has a line that is not `KEY=value`.
    func includingDotEnvFile() throws -> CommandContext {
        let file = fileURL(Self.dotEnvFileName)
        guard FileManager.default.fileExists(atPath: file.path) else { return self }
        let contents: String
        do {
            contents = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw CommandFailure("cannot read \(Self.dotEnvFileName): \(FileErrorText.describe(error))")
        }
        var context = self
        do {
            context.environment = try DotEnvFile.parse(contents).merging(environment) { _, own in own }
        } catch {
            throw CommandFailure(error.description)
        }
        return context
    }
}
