import Foundation
import ParleyCore

/// What `FakeOpenAIServer` does for one `/v1/audio/transcriptions` request.
public struct FakeTranscriptionScript: Sendable {
    /// The response status.
    public var status: Int
    /// The response body: `{"text": …}` for success, an error body otherwise.
    public var body: String
    /// The response's content type.
    public var contentType: String
    /// How long to wait before answering.
    public var delay: Duration

    /// Creates a script.
    public init(status: Int = 200, body: String, contentType: String = "application/json", delay: Duration = .zero) {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.delay = delay
    }

    /// A successful transcription of `text`.
    public static func text(_ text: String, delay: Duration = .zero) -> FakeTranscriptionScript {
        FakeTranscriptionScript(body: JSONValue.object(["text": .string(text)]).jsonText, delay: delay)
    }

    /// An error response with an OpenAI-style body.
    public static func error(status: Int, message: String, code: String? = nil) -> FakeTranscriptionScript {
        FakeTranscriptionScript(status: status, body: FakeChatScript.error(status: status, message: message, code: code).errorBody)
    }
}

/// What `FakeOpenAIServer` does for one `/v1/audio/speech` request.
public struct FakeSpeechScript: Sendable {
    /// The response status.
    public var status: Int
    /// The raw body: PCM bytes for success, an error body otherwise.
    public var body: Data
    /// The response's content type.
    public var contentType: String
    /// The size of the pieces the body is sent in (odd sizes split samples between pieces).
    public var pieceBytes: Int
    /// How long to wait between the head and the first piece.
    public var timeToFirstByte: Duration
    /// How long to wait between pieces.
    public var interPieceDelay: Duration

    /// Creates a script.
    public init(
        status: Int = 200,
        body: Data,
        contentType: String = "audio/pcm",
        pieceBytes: Int = 4_801,
        timeToFirstByte: Duration = .zero,
        interPieceDelay: Duration = .zero
    ) {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.pieceBytes = max(1, pieceBytes)
        self.timeToFirstByte = timeToFirstByte
        self.interPieceDelay = interPieceDelay
    }

    /// Successful speech: `samples` as 16-bit little-endian PCM.
    public static func samples(
        _ samples: [Int16],
        pieceBytes: Int = 4_801,
        timeToFirstByte: Duration = .zero,
        interPieceDelay: Duration = .zero
    ) -> FakeSpeechScript {
        var data = Data(capacity: samples.count * 2)
        for sample in samples { withUnsafeBytes(of: sample.littleEndian) { data.append(contentsOf: $0) } }
        return FakeSpeechScript(body: data, pieceBytes: pieceBytes, timeToFirstByte: timeToFirstByte, interPieceDelay: interPieceDelay)
    }

    /// An error response with an OpenAI-style body.
    public static func error(status: Int, message: String, code: String? = nil) -> FakeSpeechScript {
        FakeSpeechScript(
            status: status,
            body: Data(FakeChatScript.error(status: status, message: message, code: code).errorBody.utf8),
            contentType: "application/json"
        )
    }
}
