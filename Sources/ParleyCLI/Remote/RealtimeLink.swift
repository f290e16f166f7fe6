import Foundation
import ParleyCore
import ParleyNet

/// One realtime session on a running server, as the CLI uses it: client events out, server
/// events in, over the OpenAI Realtime protocol (GA shapes).
final class RealtimeLink: Sendable {
    private let socket: WebSocketConnection
    private let url: URL

    private init(socket: WebSocketConnection, url: URL) {
        self.socket = socket
        self.url = url
    }

    /// Opens a session with `server`'s credential, optionally with one of its agents, and
    /// waits for `session.created`.
    /// - Throws: `CommandFailure` when the server cannot be reached, refuses the credential, or
    ///   does not start a session.
    static func open(_ server: ServerConnection, agentID: String?) async throws -> (link: RealtimeLink, events: Events) {
        let url = server.realtimeURL(agentID: agentID)
        let socket: WebSocketConnection
        do {
            socket = try await WebSocketClient.connect(
                to: url, headers: ["Authorization": "Bearer \(server.credential)"], subprotocols: ["realtime"]
            )
        } catch WebSocketError.connectionFailed(let reason) {
            if reason.contains("HTTP 401") {
                throw CommandFailure("the server refused the credentials for a realtime session (HTTP 401); check PARLEY_SERVER_SECRET")
            }
            throw CommandFailure("cannot open a realtime session at \(url.absoluteString): \(reason)")
        }
        let link = RealtimeLink(socket: socket, url: url)
        var events = Events(socket.messages.makeAsyncIterator())
        switch await events.next() {
        case .sessionCreated?:
            return (link, events)
        case .error(let error)?:
            link.close()
            throw CommandFailure("the server did not start a session: \(error.message)")
        default:
            link.close()
            throw CommandFailure("the server at \(url.absoluteString) did not start a realtime session")
        }
    }

    /// Sends a client event.
    /// - Throws: `CommandFailure` when the session is closed.
    func send(_ event: RealtimeClientEvent) throws {
        do {
            try socket.send(.text(event.encode(dialect: .ga)))
        } catch {
            throw CommandFailure("the server closed the realtime session")
        }
    }

    /// Appends `samples` (mono PCM16 at 24 kHz) to the input buffer in 500 ms chunks, as a
    /// client streaming a recording does, then commits them as one utterance.
    /// - Throws: `CommandFailure` when the session is closed.
    func sendUtterance(_ samples: [Int16]) throws {
        try sendAudio(samples)
        try send(.inputAudioBufferCommit())
    }

    /// Appends pcm16 at 24 kHz to the input buffer in 500 ms chunks, without committing it (the
    /// server's turn detection decides where turns end).
    func sendAudio(_ samples: [Int16]) throws {
        let chunkSamples = RealtimeSessionSettings.supportedAudioRate / 2
        for start in stride(from: 0, to: samples.count, by: chunkSamples) {
            let chunk = PCM16Buffer(samples: Array(samples[start..<min(start + chunkSamples, samples.count)]))
            try send(.inputAudioBufferAppend(audio: chunk.base64EncodedString()))
        }
    }

    /// Closes the session.
    func close() {
        socket.close()
    }

    /// The server's events in order; messages that are not events this codec knows are skipped.
    /// Copies share one position: read from one task at a time.
    struct Events: Sendable {
        private var messages: WebSocketMessageStream.Iterator

        fileprivate init(_ messages: WebSocketMessageStream.Iterator) {
            self.messages = messages
        }

        /// The next event, or `nil` once the connection is closed.
        mutating func next() async -> RealtimeServerEvent? {
            while let message = await messages.next() {
                if case .text(let text) = message, let event = try? RealtimeServerEvent.decode(text) { return event }
            }
            return nil
        }
    }
}
