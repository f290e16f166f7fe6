import Foundation
import ParleyCore
import ParleyNet
import Testing
import ParleyTesting

/// A raw realtime client for server tests: sends JSON text, waits for event types with a deadline.
final class RealtimeTestClient: Sendable {
    let socket: WebSocketConnection
    private let received: EventInbox

    init(socket: WebSocketConnection) {
        self.socket = socket
        received = EventInbox()
        let inbox = received
        Task {
            for await message in socket.messages {
                if case .text(let text) = message, let event = try? JSONValue(parsing: text) { await inbox.add(event) }
            }
            await inbox.close()
        }
    }

    /// Connects to `server` with `token` (the server secret when `nil`).
    static func connect(_ server: TestServer, token: String? = nil, query: String = "", beta: Bool = false) async throws -> RealtimeTestClient {
        var headers: HTTPHeaders = ["Authorization": "Bearer \(token ?? server.secret)"]
        if beta { headers.add("OpenAI-Beta", "realtime=v1") }
        let url = URL(string: "ws://127.0.0.1:\(server.port)/v1/realtime\(query)")!
        return RealtimeTestClient(socket: try await WebSocketClient.connect(to: url, headers: headers))
    }

    func send(_ json: String) throws { try socket.send(.text(json)) }

    /// Creates an agent named `agentName` and starts an instance of it for `user`, then connects
    /// with the instance's token; returns the instance as the server described it and the client.
    static func connectToNewInstance(
        _ server: TestServer, agentName: String, user: String
    ) async throws -> (instance: JSONValue, client: RealtimeTestClient) {
        let agent = try await server.request("POST", "/v1/agents", json: #"{"name":"\#(agentName)"}"#)
        let agentID = try #require(agent.body["id"]?.stringValue)
        let instance = try await server.request("POST", "/v1/agents/\(agentID)/instances", json: #"{"user":"\#(user)"}"#)
        let instanceID = try #require(instance.body["id"]?.stringValue)
        let token = try #require(instance.body["client_secret"]?["value"]?.stringValue)
        return (instance.body, try await connect(server, token: token, query: "?instance=\(instanceID)"))
    }

    /// Waits for the next event of `type` (events before it are kept for `events`).
    func next(_ type: String, seconds: Double = 30) async -> JSONValue? {
        await received.first(where: { $0["type"]?.stringValue == type }, seconds: seconds)
    }

    /// Every event received so far.
    var events: [JSONValue] { get async { await received.all } }

    /// Whether the server closes the socket within `seconds` (events still unread are skipped).
    func closes(within seconds: Double) async -> Bool {
        _ = await received.first(where: { _ in false }, seconds: seconds)
        return await received.isClosed
    }
}

/// Received events and the waits on them.
actor EventInbox {
    private var events: [JSONValue] = []
    private var consumed = 0
    private var closed = false
    private var waiters: [Int: (predicate: @Sendable (JSONValue) -> Bool, continuation: CheckedContinuation<JSONValue?, Never>)] = [:]
    private var nextWaiter = 0

    var all: [JSONValue] { events }
    var isClosed: Bool { closed }

    func add(_ event: JSONValue) {
        events.append(event)
        serve()
    }

    func close() {
        closed = true
        serve()
    }

    /// The first event after the last one returned that matches, waiting up to `seconds`.
    func first(where predicate: @escaping @Sendable (JSONValue) -> Bool, seconds: Double) async -> JSONValue? {
        if let found = take(predicate) { return found }
        if closed { return nil }
        nextWaiter += 1
        let id = nextWaiter
        return await withCheckedContinuation { continuation in
            waiters[id] = (predicate, continuation)
            Task {
                try? await Task.sleep(for: TestDeadline.seconds(seconds))
                self.expire(id)
            }
        }
    }

    private func take(_ predicate: (JSONValue) -> Bool) -> JSONValue? {
        guard let index = events[consumed...].firstIndex(where: predicate) else { return nil }
        consumed = index + 1
        return events[index]
    }

    private func serve() {
        for (id, waiter) in waiters {
            if let found = take(waiter.predicate) {
                waiters.removeValue(forKey: id)
                waiter.continuation.resume(returning: found)
            } else if closed {
                waiters.removeValue(forKey: id)
                waiter.continuation.resume(returning: nil)
            }
        }
    }

    private func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: nil)
    }
}
