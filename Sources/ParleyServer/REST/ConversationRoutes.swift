import Foundation
import ParleyCore
import ParleyNet
import ParleyStore

/// Conversations as a whole: their recordings, and their deletion.
enum ConversationRoutes {
    struct RecordingList: Encodable {
        struct Recording: Encodable {
            var conversationID: String
            var object = "conversation.recording"
            var bytes: Int
            var durationMs: Int
            var url: String
            enum CodingKeys: String, CodingKey { case conversationID = "conversation_id", object, bytes, durationMs = "duration_ms", url }
        }
        var object = "list"
        var data: [Recording]
    }

    static func register(on router: inout Router, context: ServerContext) {
        router.get("/v1/recordings") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            let recordings = context.recordings.all().map { entry in
                RecordingList.Recording(
                    conversationID: entry.conversationID, bytes: entry.file.length, durationMs: entry.file.durationMs,
                    url: "/v1/conversations/\(entry.conversationID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? "")/recording"
                )
            }
            return JSONResponse.ok(RecordingList(data: recordings))
        }

        router.get("/v1/conversations/{id}/recording") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            return await recording(request, context: context)
        }

        router.delete("/v1/conversations/{id}") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            let id = request.pathParameters["id"] ?? ""
            do {
                guard try await context.store.conversationExists(id: id) else { return AgentRoutes.notFound(request) }
                // Its live sessions end first, on every node, so nothing is written to it afterwards.
                await context.coordinator.endSessions(conversationID: id)
                try await context.store.deleteConversation(id: id)
            } catch {
                return AgentRoutes.storageFailure(error)
            }
            do {
                try await context.recordings.delete(conversationID: id)
            } catch {
                return .error(status: 500, code: "recording_not_deleted", message: "The conversation was deleted but its recording could not be: \(error.localizedDescription)")
            }
            context.log.log("conversation.deleted", ["conversation": .string(id)])
            return JSONResponse.ok(["id": id, "object": "conversation.deleted", "deleted": "true"])
        }
    }

    /// The recording of the conversation `{id}` (from another node when this one has none), whole
    /// or the byte range asked for; the caller has been let in.
    static func recording(_ request: HTTPRequest, context: ServerContext) async -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        guard let file = context.recordings.file(conversationID: id) else {
            if request.query[RecordingRelay.ownCopyOnly] == nil,
               let relayed = await context.coordinator.recordingElsewhere(conversationID: id, range: request.headers["Range"]) {
                return relayed
            }
            return .error(status: 404, code: "recording_not_found", message: "Conversation \(id) has no recording (recordings are off for its agent, or nothing was said yet).")
        }
        return serve(file, range: request.headers["Range"])
    }

    /// The recording, whole or the byte range asked for.
    private static func serve(_ file: RecordingFile, range header: String?) -> HTTPResponse {
        var headers: HTTPHeaders = ["Content-Type": "audio/wav", "Accept-Ranges": "bytes", "Cache-Control": "no-store"]
        let range: Range<Int>
        var status = 200
        switch ByteRange.resolve(header, length: file.length) {
        case .whole:
            range = 0..<file.length
        case .partial(let bytes):
            range = bytes
            status = 206
            headers.add("Content-Range", "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(file.length)")
        case .unsatisfiable:
            var response = HTTPResponse.error(status: 416, code: "range_not_satisfiable", message: "The recording has \(file.length) bytes.")
            response.headers.add("Content-Range", "bytes */\(file.length)")
            return response
        }
        guard range.count > chunkSize else {
            do {
                return HTTPResponse(status: status, headers: headers, body: .data(try file.read(range)))
            } catch {
                return .error(status: 500, code: "recording_unreadable", message: "The recording could not be read.")
            }
        }
        return HTTPResponse(status: status, headers: headers, body: .stream(file.chunks(of: range, size: chunkSize)))
    }

    /// Bytes read from a recording at a time.
    private static let chunkSize = 64 << 10
}
