import Foundation

/// Serves files below a root folder, refusing any path that could leave it.
struct StaticFiles: Sendable {
    /// The folder served, resolved (symlinks followed, standardised).
    let root: URL

    init(root: URL) {
        self.root = root.standardizedFileURL.resolvingSymlinksInPath()
    }

    /// The file for a decoded request path, or `nil` when the path is unsafe or names no file.
    /// `/` and folders map to their `index.html`.
    func resolve(_ path: String) -> URL? {
        var segments: [String] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            // lws already collapses dot segments; anything left that looks like one is hostile.
            guard segment != ".", segment != "..", !segment.contains("\\"), !segment.contains("\0"),
                  !segment.hasPrefix("~")
            else { return nil }
            segments.append(String(segment))
        }
        var url = root
        for segment in segments { url.appendPathComponent(segment, isDirectory: false) }
        url = url.standardizedFileURL.resolvingSymlinksInPath()
        guard url.path == root.path || url.path.hasPrefix(root.path.hasSuffix("/") ? root.path : root.path + "/") else {
            return nil
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return nil }
        if isDirectory.boolValue {
            let index = url.appendingPathComponent("index.html")
            return FileManager.default.fileExists(atPath: index.path) ? index : nil
        }
        return url
    }

    /// The response for `path`: the file with its content type, or 404.
    func response(for path: String) -> HTTPResponse {
        guard let url = resolve(path), let data = try? Data(contentsOf: url, options: .mappedIfSafe) else {
            return .error(status: 404, code: "not_found", message: "No such file.")
        }
        var headers: HTTPHeaders = ["Content-Type": Self.contentType(for: url.pathExtension)]
        headers.add("Cache-Control", "no-cache")
        headers.add("X-Content-Type-Options", "nosniff")
        return HTTPResponse(status: 200, headers: headers, body: .data(data))
    }

    /// The media type for a file extension.
    static func contentType(for fileExtension: String) -> String {
        switch fileExtension.lowercased() {
        case "html", "htm": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json", "map": "application/json"
        case "txt", "md": "text/plain; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "ico": "image/x-icon"
        case "wav": "audio/wav"
        case "mp3": "audio/mpeg"
        case "ogg", "oga": "audio/ogg"
        case "opus": "audio/opus"
        case "webm": "audio/webm"
        case "wasm": "application/wasm"
        case "woff": "font/woff"
        case "woff2": "font/woff2"
        case "webmanifest": "application/manifest+json"
        default: "application/octet-stream"
        }
    }
}
