import Foundation

/// Which conversation a requested response belongs to.
public enum RealtimeConversationMode: String, Sendable, Hashable {
    /// The session's conversation: the response reads it and its items are added to it (`auto`).
    case auto
    /// Out of band (`none`): the response's items stay out of the conversation.
    case outOfBand = "none"
}

/// The optional overrides of a `response.create` (its `response` object). Every field `nil`
/// means "as configured for the session".
public struct RealtimeResponseOptions: Sendable, Hashable {
    /// Instructions for this response only.
    public var instructions: String?
    /// Whether this response speaks or only writes.
    public var outputModalities: [RealtimeModality]?
    /// Tools for this response only.
    public var tools: [ToolDefinition]?
    /// Tool choice for this response only.
    public var toolChoice: ToolChoice?
    /// Whether the response belongs to the conversation.
    public var conversation: RealtimeConversationMode?
    /// Items the response reads instead of the conversation.
    public var input: [RealtimeItem]?
    /// Client metadata echoed in the response object.
    public var metadata: [String: String]?
    /// The voice for this response.
    public var voice: String?
    /// The token limit for this response.
    public var maxOutputTokens: RealtimeTokenLimit?
    /// Sampling temperature for this response (beta).
    public var temperature: Double?

    /// Creates response options; everything left out follows the session.
    public init(
        instructions: String? = nil, outputModalities: [RealtimeModality]? = nil, tools: [ToolDefinition]? = nil,
        toolChoice: ToolChoice? = nil, conversation: RealtimeConversationMode? = nil, input: [RealtimeItem]? = nil,
        metadata: [String: String]? = nil, voice: String? = nil, maxOutputTokens: RealtimeTokenLimit? = nil,
        temperature: Double? = nil
    ) {
        self.instructions = instructions
        self.outputModalities = outputModalities
        self.tools = tools
        self.toolChoice = toolChoice
        self.conversation = conversation
        self.input = input
        self.metadata = metadata
        self.voice = voice
        self.maxOutputTokens = maxOutputTokens
        self.temperature = temperature
    }
}

extension RealtimeResponseOptions {
    /// What these options ask of a voice session's response.
    /// - Throws: `invalid_value` naming an `input` item that holds nothing a model can read.
    public func responseRequest() throws(RealtimeProtocolError) -> ResponseRequest {
        var messages: [ChatMessage]?
        if let input {
            messages = []
            for (index, item) in input.enumerated() {
                guard let message = item.chatMessage else {
                    throw .invalidValue("response.input[\(index)]", "the item has no content a model can read (text, a transcript, a function call or its output).")
                }
                messages?.append(message)
            }
        }
        return ResponseRequest(
            instructions: instructions, speaks: outputModalities.map { $0.contains(.audio) }, maxOutputTokens: maxOutputTokens,
            clientTools: tools, toolChoice: toolChoice, metadata: metadata, voice: voice, temperature: temperature,
            isOutOfBand: conversation == .outOfBand, input: messages
        )
    }

    /// Decodes the `response` object of `response.create`, accepting both dialects' names.
    init(decoding reader: RealtimeJSONReader, dialect: RealtimeDialect) throws(RealtimeProtocolError) {
        self.init()
        instructions = try reader.string("instructions")
        let gaModalities = try RealtimeSessionSettings.decodeModalities(reader, key: "output_modalities")
        let betaModalities = try RealtimeSessionSettings.decodeModalities(reader, key: "modalities")
        outputModalities = dialect == .ga ? gaModalities ?? betaModalities : betaModalities ?? gaModalities
        tools = try RealtimeSessionSettings.decodeTools(reader)
        toolChoice = try RealtimeSessionSettings.decodeToolChoice(reader, key: "tool_choice")
        switch try reader.string("conversation") {
        case nil: conversation = nil
        case let name?:
            guard let mode = RealtimeConversationMode(rawValue: name) else {
                throw .unsupported(reader.path(of: "conversation"), "\(quotedExcerpt(name)) is not supported; use 'auto' or 'none'.")
            }
            conversation = mode
        }
        if let inputReaders = try reader.objects("input") {
            var items: [RealtimeItem] = []
            for itemReader in inputReaders { items.append(try RealtimeItem(decoding: itemReader)) }
            input = items
        }
        metadata = try reader.stringMap("metadata")
        let gaVoice = try reader.object("audio")?.object("output")?.string("voice")
        let betaVoice = try reader.string("voice")
        voice = dialect == .ga ? gaVoice ?? betaVoice : betaVoice ?? gaVoice
        let gaLimit = try RealtimeSessionSettings.decodeTokenLimit(reader, key: "max_output_tokens")
        let betaLimit = try RealtimeSessionSettings.decodeTokenLimit(reader, key: "max_response_output_tokens")
        maxOutputTokens = dialect == .ga ? gaLimit ?? betaLimit : betaLimit ?? gaLimit
        temperature = try RealtimeSessionSettings.decodeTemperature(reader, key: "temperature")
    }

    /// Writes the `response` object's members in `dialect`.
    func write(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        writer.field("instructions", ifPresent: instructions)
        if let outputModalities {
            writer.field(
                dialect == .ga ? "output_modalities" : "modalities",
                RealtimeSessionSettings.modalityNames(outputModalities, dialect: dialect)
            )
        }
        if let tools { RealtimeSessionSettings.writeTools(tools, to: &writer) }
        if let toolChoice { RealtimeSessionSettings.writeToolChoice(toolChoice, dialect: dialect, to: &writer) }
        writer.field("conversation", ifPresent: conversation?.rawValue)
        if let input {
            writer.array("input") { array in
                for item in input { array.elementObject { item.write(to: &$0, dialect: dialect) } }
            }
        }
        if let metadata {
            writer.object("metadata") { object in
                for key in metadata.keys.sorted() { object.field(key, metadata[key] ?? "") }
            }
        }
        if let voice {
            switch dialect {
            case .ga: writer.object("audio") { audio in audio.object("output") { $0.field("voice", voice) } }
            case .beta: writer.field("voice", voice)
            }
        }
        if let maxOutputTokens {
            RealtimeSessionSettings.writeTokenLimit(
                maxOutputTokens, key: dialect == .ga ? "max_output_tokens" : "max_response_output_tokens", to: &writer
            )
        }
        if dialect == .beta { writer.field("temperature", ifPresent: temperature) }
    }
}
