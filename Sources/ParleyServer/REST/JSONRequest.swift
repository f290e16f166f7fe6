import Foundation
import ParleyNet

/// Why a request body was refused, already phrased as the response to send.
struct BadRequest: Error {
    let response: HTTPResponse

    init(_ message: String, code: String = "invalid_request", status: Int = 400) {
        response = .error(status: status, code: code, message: message)
    }
}

extension HTTPRequest {
    /// Decodes a JSON body, or an empty object when there is no body.
    /// - Throws: `BadRequest` naming what is wrong.
    func jsonBody<T: Decodable>(_ type: T.Type, allowEmpty: Bool = false) throws(BadRequest) -> T {
        let data = body.isEmpty && allowEmpty ? Data("{}".utf8) : body
        guard !data.isEmpty else { throw BadRequest("The request needs a JSON body.") }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw BadRequest("\(Self.path(context)): \(context.debugDescription)")
        } catch let DecodingError.keyNotFound(key, context) {
            throw BadRequest("\(Self.path(context, key)): is required")
        } catch {
            throw BadRequest("The body is not valid JSON.", code: "invalid_json")
        }
    }

    private static func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
        let keys = context.codingPath + (key.map { [$0] } ?? [])
        return keys.isEmpty ? "body" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}

/// Shapes for JSON responses.
enum JSONResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func ok<T: Encodable>(_ value: T, status: Int = 200) -> HTTPResponse {
        .json(value, status: status, encoder: encoder)
    }
}
