import Foundation
import ParleyNet
import ParleyStore

/// Any node serves any recording. A recording is a file on the node that recorded the call; a
/// node asked for one it does not hold asks the other live nodes for their own copy (over HTTP
/// at their `PARLEY_NODE_URL`, with the server secret every node shares) and streams the first
/// one found on, byte range and all.
enum RecordingRelay {
    /// The query parameter asking a node for its own copy only, so relays never chain.
    static let ownCopyOnly = "node_local"

    /// The recording as the first of `nodes` holding it answers, or `nil` when none does.
    static func fetch(conversationID: String, range: String?, from nodes: [ClusterNode], secret: String) async -> HTTPResponse? {
        let id = conversationID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? conversationID
        for node in nodes {
            guard let url = URL(string: "\(node.url)/v1/conversations/\(id)/recording?\(ownCopyOnly)=1") else { continue }
            var headers = ["Authorization": "Bearer \(secret)"]
            if let range { headers["Range"] = range }
            guard let response = try? await HTTPClient.shared.stream(HTTPClient.Request(url: url, headers: headers)),
                  [200, 206, 416].contains(response.status) else { continue }
            var relayed = HTTPHeaders()
            for name in ["Content-Type", "Content-Range", "Accept-Ranges", "Cache-Control"] {
                if let value = response.headers[name.lowercased()] { relayed.add(name, value) }
            }
            return HTTPResponse(status: response.status, headers: relayed, body: .stream(relay(response.body)))
        }
        return nil
    }

    /// The far node's body, piece by piece; a broken connection ends it early.
    private static func relay(_ body: AsyncThrowingStream<Data, any Error>) -> AsyncStream<Data> {
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        let pump = Task {
            do {
                for try await piece in body { continuation.yield(piece) }
            } catch {
                // The far node went away mid-recording: the client gets a short body.
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }
}
