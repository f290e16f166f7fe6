import Foundation

/// An error of the realtime protocol: the payload of an `error` event, and what decoding a
/// malformed event throws.
///
/// Codes used by the codec: `invalid_json`, `invalid_event` (not an object, or no string
/// `type`), `unknown_event`, `invalid_value`, `missing_required_parameter`, `unsupported_value`.
public struct RealtimeProtocolError: Error, Sendable, Hashable {
    /// The error family: `invalid_request_error` for client mistakes, `server_error` otherwise.
    public var type: String
    /// A stable machine-readable code, for example `invalid_value`.
    public var code: String
    /// What went wrong, in words a person can act on.
    public var message: String
    /// The field the error is about, as a dotted path (`session.audio.input.turn_detection`).
    public var param: String?
    /// The `event_id` of the client event that caused the error.
    public var eventID: String?

    /// Creates an error.
    public init(
        type: String = "invalid_request_error", code: String, message: String, param: String? = nil,
        eventID: String? = nil
    ) {
        self.type = type
        self.code = code
        self.message = message
        self.param = param
        self.eventID = eventID
    }

    /// The error event payload for a voice-session error caused by the client event `eventID`.
    public init(_ error: SessionError, eventID: String? = nil) {
        let isClientMistake = error.category == nil || error.category == .invalidRequest
        self.init(
            type: isClientMistake ? "invalid_request_error" : "server_error", code: error.code,
            message: error.message, param: error.parameter, eventID: eventID
        )
    }

    /// This error attributed to the client event `eventID` (kept when already set).
    public func attributed(to eventID: String?) -> RealtimeProtocolError {
        var error = self
        if error.eventID == nil { error.eventID = eventID }
        return error
    }

    /// The text is not JSON.
    static func invalidJSON(_ detail: String) -> RealtimeProtocolError {
        RealtimeProtocolError(code: "invalid_json", message: "The message is not valid JSON: \(detail).")
    }

    /// A field holds a value of the wrong type or out of range.
    static func invalidValue(_ param: String, _ message: String) -> RealtimeProtocolError {
        RealtimeProtocolError(code: "invalid_value", message: "Invalid value for '\(param)': \(message)", param: param)
    }

    /// A required field is absent.
    static func missing(_ param: String) -> RealtimeProtocolError {
        RealtimeProtocolError(
            code: "missing_required_parameter", message: "Missing required parameter: '\(param)'.", param: param
        )
    }

    /// A valid value Parley does not support.
    static func unsupported(_ param: String, _ message: String) -> RealtimeProtocolError {
        RealtimeProtocolError(code: "unsupported_value", message: "Unsupported value for '\(param)': \(message)", param: param)
    }
}

/// A client's value quoted for an error message, cut to 64 characters so that a hostile
/// megabyte-long value is never echoed back.
func quotedExcerpt(_ value: String) -> String {
    let limit = 64
    let excerpt = value.utf8.count <= limit ? value : String(value.prefix(limit)) + "…"
    return "'\(excerpt)'"
}
