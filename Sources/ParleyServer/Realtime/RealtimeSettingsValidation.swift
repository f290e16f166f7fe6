import Foundation
import ParleyCore
import ParleyLocal

/// Checks what a client asks for in `session.update` and `response.create` against what
/// Parley supports and the limits on each field. A problem is reported as an `invalid_value`
/// error naming the field; the session goes on unchanged.
///
/// | field | limit |
/// |---|---|
/// | `instructions` | 65,536 bytes of UTF-8 |
/// | `tools` | 128 tools |
/// | a tool's `description` and `parameters` | 16,384 bytes of JSON together |
/// | `metadata` | 16 pairs; keys up to 64 characters, values up to 512 |
/// | `input` of an out-of-band response | 256 items |
/// | the transcription's `language` | an ISO-639-1 code Whisper knows, and the recognizer hears |
enum RealtimeSettingsValidation {
    static let maximumInstructionsBytes = 65_536
    static let maximumTools = 128
    static let maximumToolSchemaBytes = 16_384
    static let maximumMetadataPairs = 16
    static let maximumMetadataKeyLength = 64
    static let maximumMetadataValueLength = 512
    static let maximumInputItems = 256

    /// A field a client sent that Parley refuses, and why.
    struct Problem: Error, Equatable {
        var message: String
        var param: String
    }

    /// Checks an update a client sent; `tools` are the session's tools after the update,
    /// `recognizerLanguages` the languages its recognizer hears (`nil`: it does not say).
    static func problem(
        in update: RealtimeSessionSettings, tools: [ToolDefinition], recognizerLanguages: Set<String>?, dialect: RealtimeDialect
    ) -> Problem? {
        if let speed = update.speed, !(0.25...4).contains(speed) {
            return Problem(message: "speed must be between 0.25 and 4.", param: "session.audio.output.speed")
        }
        if let temperature = update.temperature, !(0...2).contains(temperature) {
            return Problem(message: "temperature must be between 0 and 2.", param: "session.temperature")
        }
        if case .serverVAD(let vad)? = update.turnDetection, !(0...1).contains(vad.threshold) {
            return Problem(message: "turn_detection.threshold must be between 0 and 1.", param: "session.turn_detection.threshold")
        }
        return languageProblem(update.inputTranscription, recognizerLanguages: recognizerLanguages, dialect: dialect)
            ?? instructionsProblem(update.instructions, param: "session.instructions")
            ?? toolsProblem(update.tools, param: "session.tools")
            ?? toolChoiceProblem(update.toolChoice, tools: tools, param: "session.tool_choice")
    }

    /// Checks the options of a `response.create`; `sessionTools` are the session's tools.
    static func problem(in options: RealtimeResponseOptions, sessionTools: [ToolDefinition]) -> Problem? {
        if let input = options.input, input.count > maximumInputItems {
            return Problem(message: "input holds \(input.count) items; at most \(maximumInputItems) are allowed.", param: "response.input")
        }
        if options.input != nil, options.conversation != .outOfBand {
            return Problem(message: "input is only allowed with conversation 'none' (an out-of-band response).", param: "response.input")
        }
        return instructionsProblem(options.instructions, param: "response.instructions")
            ?? toolsProblem(options.tools, param: "response.tools")
            ?? toolChoiceProblem(options.toolChoice, tools: options.tools ?? sessionTools, param: "response.tool_choice")
            ?? metadataProblem(options.metadata, param: "response.metadata")
    }

    /// A transcription language that is no ISO-639-1 code Whisper knows, or one the recognizer
    /// does not hear (a language other than English for tiny.en).
    private static func languageProblem(
        _ transcription: RealtimeInputTranscription?, recognizerLanguages: Set<String>?, dialect: RealtimeDialect
    ) -> Problem? {
        guard case .enabled(_, let language?, _)? = transcription, !language.isEmpty else { return nil }
        let param = dialect == .beta ? "session.input_audio_transcription.language" : "session.audio.input.transcription.language"
        guard WhisperLanguages.codes.contains(language) else {
            return Problem(
                message: "'\(language.prefix(64))' is not an ISO-639-1 language code Whisper knows (for example 'en', 'de', 'fr', 'es'). The session is unchanged.",
                param: param
            )
        }
        if let recognizerLanguages, !recognizerLanguages.contains(language) {
            let heard = recognizerLanguages.sorted().joined(separator: ", ")
            return Problem(
                message: "This server's speech recognizer hears only \(heard == "en" ? "English" : heard), not '\(language)'; "
                    + "a multilingual Whisper model (parley serve --asr-model base) hears it. The session is unchanged.",
                param: param
            )
        }
        return nil
    }

    private static func instructionsProblem(_ instructions: String?, param: String) -> Problem? {
        guard let instructions, instructions.utf8.count > maximumInstructionsBytes else { return nil }
        return Problem(
            message: "instructions are \(instructions.utf8.count) bytes; at most \(maximumInstructionsBytes) are allowed.", param: param
        )
    }

    private static func toolsProblem(_ tools: [ToolDefinition]?, param: String) -> Problem? {
        guard let tools else { return nil }
        if tools.count > maximumTools {
            return Problem(message: "\(tools.count) tools were given; at most \(maximumTools) are allowed.", param: param)
        }
        var names: Set<String> = []
        for (index, tool) in tools.enumerated() {
            guard names.insert(tool.name).inserted else {
                return Problem(message: "Two tools are named '\(tool.name)'; tool names must be unique.", param: "\(param)[\(index)].name")
            }
            let size = tool.description.utf8.count + ((try? JSONEncoder().encode(tool.parameters).count) ?? 0)
            if size > maximumToolSchemaBytes {
                return Problem(
                    message: "Tool '\(tool.name)' has \(size) bytes of description and parameters; at most \(maximumToolSchemaBytes) are allowed.",
                    param: "\(param)[\(index)].parameters"
                )
            }
        }
        return nil
    }

    private static func toolChoiceProblem(_ choice: ToolChoice?, tools: [ToolDefinition], param: String) -> Problem? {
        switch choice {
        case .function(let name)? where !tools.contains { $0.name == name }:
            return Problem(message: "tool_choice names the function '\(name)', which is not among the tools.", param: param)
        case .required? where tools.isEmpty:
            return Problem(message: "tool_choice 'required' needs at least one tool.", param: param)
        default:
            return nil
        }
    }

    private static func metadataProblem(_ metadata: [String: String]?, param: String) -> Problem? {
        guard let metadata else { return nil }
        if metadata.count > maximumMetadataPairs {
            return Problem(message: "metadata has \(metadata.count) pairs; at most \(maximumMetadataPairs) are allowed.", param: param)
        }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            if key.count > maximumMetadataKeyLength {
                return Problem(message: "A metadata key is \(key.count) characters long; at most \(maximumMetadataKeyLength) are allowed.", param: param)
            }
            if value.count > maximumMetadataValueLength {
                return Problem(
                    message: "metadata '\(key)' is \(value.count) characters long; at most \(maximumMetadataValueLength) are allowed.",
                    param: "\(param).\(key)"
                )
            }
        }
        return nil
    }
}
