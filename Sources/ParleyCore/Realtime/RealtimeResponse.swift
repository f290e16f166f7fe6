import Foundation

/// Where a response stands.
public enum RealtimeResponseStatus: String, Sendable, Hashable, CaseIterable {
    /// Still producing output.
    case inProgress = "in_progress"
    /// Finished normally.
    case completed
    /// Cancelled by the client or by the user talking over it.
    case cancelled
    /// Stopped by an error.
    case failed
    /// Stopped early (token limit, content filter).
    case incomplete

    /// The realtime status of a finished voice-session response.
    public init(_ status: ResponseStatus) {
        switch status {
        case .completed: self = .completed
        case .cancelled: self = .cancelled
        case .failed: self = .failed
        case .incomplete: self = .incomplete
        }
    }
}

/// Why a response ended other than by completing: `status_details`.
public struct RealtimeResponseStatusDetails: Sendable, Hashable {
    /// Why it was cancelled or incomplete.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// The user started talking (server VAD).
        case turnDetected = "turn_detected"
        /// The client sent `response.cancel`.
        case clientCancelled = "client_cancelled"
        /// The token limit was reached.
        case maxOutputTokens = "max_output_tokens"
        /// A content filter stopped it.
        case contentFilter = "content_filter"
    }

    /// The reason, for `cancelled` and `incomplete` responses.
    public var reason: Reason?
    /// The error, for `failed` responses: its `type`, `code` and `message` are written.
    public var error: RealtimeProtocolError?

    /// Creates status details.
    public init(reason: Reason? = nil, error: RealtimeProtocolError? = nil) {
        self.reason = reason
        self.error = error
    }
}

/// Token counts of one response.
public struct RealtimeUsage: Sendable, Hashable {
    /// Tokens read.
    public var inputTokens: Int
    /// Tokens written.
    public var outputTokens: Int
    /// Both together.
    public var totalTokens: Int { inputTokens + outputTokens }

    /// Creates a usage record.
    public init(inputTokens: Int, outputTokens: Int) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
    }

    /// The realtime usage of a language model's token usage.
    public init(_ usage: TokenUsage) {
        self.init(inputTokens: usage.promptTokens, outputTokens: usage.completionTokens)
    }
}

/// A response object, as carried by `response.created` and `response.done`.
public struct RealtimeResponse: Sendable, Hashable {
    /// The response id, `resp_…`.
    public var id: String
    /// Where it stands.
    public var status: RealtimeResponseStatus
    /// Why it ended other than by completing.
    public var statusDetails: RealtimeResponseStatusDetails?
    /// The items it produced.
    public var output: [RealtimeItem]
    /// Token counts, once done.
    public var usage: RealtimeUsage?
    /// The conversation it belongs to; `nil` for an out-of-band response.
    public var conversationID: String?
    /// Whether it speaks or only writes.
    public var outputModalities: [RealtimeModality]
    /// The voice it speaks with.
    public var voice: String?
    /// Its token limit.
    public var maxOutputTokens: RealtimeTokenLimit?
    /// The client's metadata from `response.create`.
    public var metadata: [String: String]?
    /// The format of its audio on the wire.
    public var outputAudioFormat: RealtimeAudioFormat

    /// Creates a response object.
    public init(
        id: String, status: RealtimeResponseStatus, statusDetails: RealtimeResponseStatusDetails? = nil,
        output: [RealtimeItem] = [], usage: RealtimeUsage? = nil, conversationID: String? = nil,
        outputModalities: [RealtimeModality] = [.audio], voice: String? = nil,
        maxOutputTokens: RealtimeTokenLimit? = nil, metadata: [String: String]? = nil,
        outputAudioFormat: RealtimeAudioFormat = .pcm16
    ) {
        self.outputAudioFormat = outputAudioFormat
        self.id = id
        self.status = status
        self.statusDetails = statusDetails
        self.output = output
        self.usage = usage
        self.conversationID = conversationID
        self.outputModalities = outputModalities
        self.voice = voice
        self.maxOutputTokens = maxOutputTokens
        self.metadata = metadata
    }
}

// MARK: - Coding

extension RealtimeResponse {
    /// Writes the response object's members in `dialect`.
    func write(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        writer.field("object", "realtime.response")
        writer.field("id", id)
        writer.field("status", status.rawValue)
        if let statusDetails, status != .inProgress, status != .completed || statusDetails.error != nil {
            writer.object("status_details") { details in
                details.field("type", status.rawValue)
                details.field("reason", ifPresent: statusDetails.reason?.rawValue)
                if let error = statusDetails.error {
                    details.object("error") { object in
                        object.field("type", error.type)
                        object.field("code", error.code)
                        object.field("message", error.message)
                    }
                }
            }
        } else {
            writer.nullField("status_details")
        }
        writer.array("output") { array in
            for item in output {
                array.elementObject { item.write(to: &$0, dialect: dialect) }
            }
        }
        writer.field("conversation_id", orNull: conversationID)
        let modalities = RealtimeSessionSettings.modalityNames(outputModalities, dialect: dialect)
        switch dialect {
        case .ga:
            writer.field("output_modalities", modalities)
            writer.object("audio") { audio in
                audio.object("output") { output in
                    output.object("format") { RealtimeSessionSettings.writeGAFormat(outputAudioFormat, to: &$0) }
                    output.field("voice", ifPresent: voice)
                }
            }
        case .beta:
            writer.field("modalities", modalities)
            writer.field("voice", ifPresent: voice)
            writer.field("output_audio_format", outputAudioFormat.betaName)
        }
        if let maxOutputTokens {
            RealtimeSessionSettings.writeTokenLimit(maxOutputTokens, key: "max_output_tokens", to: &writer)
        }
        if let usage {
            writer.object("usage") { object in
                object.field("total_tokens", usage.totalTokens)
                object.field("input_tokens", usage.inputTokens)
                object.field("output_tokens", usage.outputTokens)
                object.object("input_token_details") { details in
                    details.field("text_tokens", usage.inputTokens)
                    details.field("audio_tokens", 0)
                    details.field("cached_tokens", 0)
                }
                object.object("output_token_details") { details in
                    details.field("text_tokens", usage.outputTokens)
                    details.field("audio_tokens", 0)
                }
            }
        } else {
            writer.nullField("usage")
        }
        if let metadata {
            writer.object("metadata") { object in
                for key in metadata.keys.sorted() { object.field(key, metadata[key] ?? "") }
            }
        } else {
            writer.nullField("metadata")
        }
    }

    /// Decodes a response object of either dialect.
    init(decoding reader: RealtimeJSONReader) throws(RealtimeProtocolError) {
        let statusName = try reader.string("status") ?? RealtimeResponseStatus.inProgress.rawValue
        guard let status = RealtimeResponseStatus(rawValue: statusName) else {
            throw .invalidValue(reader.path(of: "status"), "\(quotedExcerpt(statusName)) is not a response status.")
        }
        var statusDetails: RealtimeResponseStatusDetails?
        if let details = try reader.object("status_details") {
            var decoded = RealtimeResponseStatusDetails()
            // Reasons this code does not know are dropped, never fatal.
            decoded.reason = try details.string("reason").flatMap(RealtimeResponseStatusDetails.Reason.init(rawValue:))
            if let error = try details.object("error") {
                decoded.error = RealtimeProtocolError(
                    type: try error.string("type") ?? "server_error", code: try error.string("code") ?? "",
                    message: try error.string("message") ?? ""
                )
            }
            statusDetails = decoded
        }
        var output: [RealtimeItem] = []
        for item in try reader.objects("output") ?? [] {
            output.append(try RealtimeItem(decoding: item))
        }
        var usage: RealtimeUsage?
        if let usageReader = try reader.object("usage") {
            usage = RealtimeUsage(
                inputTokens: try usageReader.int("input_tokens", in: 0...Int.max) ?? 0,
                outputTokens: try usageReader.int("output_tokens", in: 0...Int.max) ?? 0
            )
        }
        let gaModalities = try RealtimeSessionSettings.decodeModalities(reader, key: "output_modalities")
        let betaModalities = try RealtimeSessionSettings.decodeModalities(reader, key: "modalities")
        let gaVoice = try reader.object("audio")?.object("output")?.string("voice")
        let betaVoice = try reader.string("voice")
        self.init(
            id: try reader.string("id") ?? "", status: status, statusDetails: statusDetails, output: output, usage: usage,
            conversationID: try reader.string("conversation_id"), outputModalities: gaModalities ?? betaModalities ?? [.audio],
            voice: gaVoice ?? betaVoice,
            maxOutputTokens: try RealtimeSessionSettings.decodeTokenLimit(reader, key: "max_output_tokens"),
            metadata: try reader.stringMap("metadata")
        )
    }
}
