import Foundation

/// The named text parts of a `multipart/form-data` body (RFC 7578), as OpenAI's
/// `/v1/realtime/calls` takes them (`sdp` and `session`). Bounded: at most `maximumParts`.
struct MultipartFormParts {
    static let maximumParts = 8

    /// Each part's name and its content, as text.
    var parts: [String: String] = [:]

    /// Parses `body` with the boundary of `contentType`.
    /// - Throws: `BadRequest` naming what is wrong.
    init(body: Data, contentType: String) throws(BadRequest) {
        guard let boundaryRange = contentType.range(of: "boundary=", options: .caseInsensitive) else {
            throw BadRequest("multipart/form-data without a boundary")
        }
        var boundary = String(contentType[boundaryRange.upperBound...].prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces)
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 { boundary = String(boundary.dropFirst().dropLast()) }
        guard (1...70).contains(boundary.count) else { throw BadRequest("multipart/form-data with an invalid boundary") }
        let delimiter = Data("--\(boundary)".utf8)
        var sections: [Data] = []
        var searchStart = body.startIndex
        var previousEnd: Data.Index?
        while let found = body.range(of: delimiter, in: searchStart..<body.endIndex) {
            if let previousEnd { sections.append(body[previousEnd..<found.lowerBound]) }
            guard sections.count <= Self.maximumParts else { throw BadRequest("more than \(Self.maximumParts) multipart parts") }
            previousEnd = found.upperBound
            searchStart = found.upperBound
        }
        for section in sections {
            guard let headerEnd = section.range(of: Data("\r\n\r\n".utf8)) else { continue }
            let headers = String(decoding: section[section.startIndex..<headerEnd.lowerBound], as: UTF8.self)
            guard let nameRange = headers.range(of: "name=\"") else { continue }
            let name = String(headers[nameRange.upperBound...].prefix { $0 != "\"" })
            var content = section[headerEnd.upperBound...]
            if content.suffix(2) == Data("\r\n".utf8) { content = content.dropLast(2) }
            parts[name] = String(decoding: content, as: UTF8.self)
        }
    }
}
