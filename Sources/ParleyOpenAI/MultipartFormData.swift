import Foundation

/// A `multipart/form-data` body: text fields and files.
struct MultipartFormData {
    /// The boundary between parts.
    let boundary = "parley-\(UUID().uuidString)"
    private(set) var body = Data()

    /// The `Content-Type` header value for this body.
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    mutating func add(name: String, value: String) {
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
    }

    /// Adds a file.
    mutating func add(name: String, filename: String, contentType: String, data: Data) {
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(filename)\"\r\nContent-Type: \(contentType)\r\n\r\n".utf8))
        body.append(data)
        body.append(Data("\r\n".utf8))
    }

    /// The finished body, with the closing boundary.
    func finished() -> Data {
        body + Data("--\(boundary)--\r\n".utf8)
    }
}
