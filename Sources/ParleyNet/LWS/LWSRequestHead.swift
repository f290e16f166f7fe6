import CLibWebsockets
import Foundation

/// Reads the request line, headers and peer of an lws server connection whose header table is
/// still attached (`LWS_CALLBACK_HTTP`, `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`). Service thread only.
enum LWSRequestHead {
    /// The token index of each method lws recognises, with its name.
    private static let methodTokens: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_PUT_URI, "PUT"),
        (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_DELETE_URI, "DELETE"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
        (WSI_TOKEN_HEAD_URI, "HEAD"),
    ]

    /// The header tokens lws parses into indexes, and their field names (no colon) at the same
    /// positions. Two arrays, so that looking for the headers present reads plain integers
    /// (no retain and release of a name per token).
    private static let (headerTokens, headerNames): ([lws_token_indexes], [String]) = {
        var tokens: [lws_token_indexes] = []
        var names: [String] = []
        for index in 0..<WSI_TOKEN_COUNT.rawValue {
            let token = lws_token_indexes(rawValue: index)
            guard let cName = lws_token_to_string(token) else { continue }
            let name = String(cString: cName)
            // Real header fields end with a colon; methods, pseudo-headers and markers do not.
            guard name.hasSuffix(":"), !name.hasPrefix(":") else { continue }
            tokens.append(token)
            names.append(String(name.dropLast()))
        }
        return (tokens, names)
    }()

    /// The request method and the token holding its URI, or `nil` for a method lws did not parse.
    static func method(_ wsi: OpaquePointer) -> (name: String, uriToken: lws_token_indexes)? {
        for (token, name) in methodTokens where lws_hdr_total_length(wsi, token) > 0 {
            return (name, token)
        }
        return nil
    }

    /// The value of header `token`, or `nil` when absent.
    static func value(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer in
            let copied = Int(lws_hdr_copy(wsi, buffer.baseAddress, Int32(length + 1), token))
            return copied < 0 ? nil : CText.string(buffer.baseAddress, length: copied)
        }
    }

    /// The value of a header lws does not know by index (`name` lower case, no colon).
    static func customValue(_ wsi: OpaquePointer, _ name: String) -> String? {
        customValue(wsi, CustomHeaderKey(name))
    }

    /// The value of the custom header `key`, or `nil` when absent.
    static func customValue(_ wsi: OpaquePointer, _ key: CustomHeaderKey) -> String? {
        key.lookupKey.withUnsafeBufferPointer { cKey -> String? in
            let keyLength = Int32(cKey.count - 1)
            let length = Int(lws_hdr_custom_length(wsi, cKey.baseAddress, keyLength))
            guard length >= 0 else { return nil }
            return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer in
                let copied = Int(lws_hdr_custom_copy(wsi, buffer.baseAddress, Int32(length + 1), cKey.baseAddress, keyLength))
                return copied < 0 ? nil : CText.string(buffer.baseAddress, length: copied)
            }
        }
    }

    /// Every known header that is present, plus the listed custom ones.
    static func headers(_ wsi: OpaquePointer, custom: [CustomHeaderKey]) -> HTTPHeaders {
        var headers = HTTPHeaders()
        let names = headerNames
        headerTokens.withUnsafeBufferPointer { tokens in
            for position in tokens.indices {
                if let value = value(wsi, tokens[position]) { headers.add(names[position], value) }
            }
        }
        for key in custom {
            if let value = customValue(wsi, key) { headers.add(key.name, value) }
        }
        return headers
    }

    /// The decoded query parameters (lws splits them on `&` and decodes them).
    static func query(_ wsi: OpaquePointer) -> [String: String] {
        var query: [String: String] = [:]
        var index: Int32 = 0
        while true {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index))
            guard length > 0 else { break }
            let fragment = withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer -> String in
                let copied = Int(lws_hdr_copy_fragment(wsi, buffer.baseAddress, Int32(length + 1), WSI_TOKEN_HTTP_URI_ARGS, index))
                return CText.string(buffer.baseAddress, length: max(copied, 0))
            }
            if let equals = fragment.firstIndex(of: "=") {
                query[String(fragment[..<equals])] = String(fragment[fragment.index(after: equals)...])
            } else if !fragment.isEmpty {
                query[fragment] = ""
            }
            index += 1
        }
        return query
    }

    /// The peer's numeric address.
    static func remoteAddress(_ wsi: OpaquePointer) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            buffer.initialize(repeating: 0)
            guard lws_get_peer_simple(wsi, buffer.baseAddress, 64) != nil else { return "" }
            return String(cString: buffer.baseAddress!)
        }
    }

    /// Whether the request line named HTTP/1.1 (lws keeps the version as the value of its
    /// `WSI_TOKEN_HTTP` token).
    private static func isHTTP11(_ wsi: OpaquePointer) -> Bool {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 16) { buffer in
            let length = Int(lws_hdr_copy(wsi, buffer.baseAddress, 16, WSI_TOKEN_HTTP))
            guard length >= 3 else { return false }
            return buffer[length - 3] == 0x31 && buffer[length - 2] == 0x2E && buffer[length - 1] == 0x31 // "1.1"
        }
    }

    /// Whether the request asked to keep the connection open after the response; `connection`
    /// is its `Connection` header.
    static func wantsKeepAlive(_ wsi: OpaquePointer, connection: String?) -> Bool {
        let connection = connection ?? ""
        if isHTTP11(wsi) { return !connection.asciiCaseInsensitiveContains("close") }
        return connection.asciiCaseInsensitiveContains("keep-alive")
    }
}

/// A header name lws does not parse by index, prepared once for `lws_hdr_custom_*` lookups.
struct CustomHeaderKey: Sendable {
    /// The field name in lower case, without the colon.
    let name: String
    /// `name` followed by a colon and a NUL, as lws looks it up.
    let lookupKey: [CChar]

    init(_ name: String) {
        self.name = name.lowercased()
        lookupKey = (self.name + ":").utf8.map { CChar(bitPattern: $0) } + [0]
    }
}

extension String {
    /// Whether `needle` (ASCII lower case) occurs in this string, ignoring ASCII case.
    func asciiCaseInsensitiveContains(_ needle: String) -> Bool {
        let haystack = Array(utf8)
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty else { return true }
        guard haystack.count >= pattern.count else { return false }
        for start in 0...(haystack.count - pattern.count) {
            var index = 0
            while index < pattern.count {
                let byte = haystack[start + index]
                let lowered = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
                guard lowered == pattern[index] else { break }
                index += 1
            }
            if index == pattern.count { return true }
        }
        return false
    }
}
