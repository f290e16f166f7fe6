import Foundation
import ParleyClient
import ParleyCore
import ParleyTesting
import Testing

/// The realtime client on its own against a real server: typed events both ways, tokens from
/// the server's local endpoint, and giving up when no token can be had.
@Suite struct RealtimeClientTests {
    /// Collects a client's updates until `done` says the collection is complete.
    private static func updates(
        of client: RealtimeClient, until done: @escaping @Sendable ([RealtimeClientUpdate]) -> Bool
    ) async -> [RealtimeClientUpdate] {
        var seen: [RealtimeClientUpdate] = []
        let collected = await withTaskGroup(of: [RealtimeClientUpdate]?.self) { group in
            group.addTask {
                var seen: [RealtimeClientUpdate] = []
                for await update in client.updates {
                    seen.append(update)
                    if case .connected = update {
                        client.send(.conversationItemCreate(item: .message(id: nil, role: .user, content: [.inputText("Hi")])))
                        client.send(.responseCreate())
                    }
                    if done(seen) { return seen }
                }
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        seen = collected ?? []
        return seen
    }

    @Test func aClientWithALocalTokenSendsAndReceivesTypedEvents() async throws {
        let server = try ClientTestServer.start()
        let tokens = LocalTokenSource(server: server.baseURL)
        let token = try await tokens.fetch()
        #expect(token.value.hasPrefix("pk_") || token.value.count > 20)
        #expect((token.expiresAt?.timeIntervalSinceNow ?? 0) > 60)

        let client = RealtimeClient(configuration: .init(server: server.baseURL), token: tokens.fetch)
        client.start()
        let seen = await Self.updates(of: client) { updates in
            updates.contains { if case .event(.responseDone, _) = $0 { true } else { false } }
        }
        client.stop()
        await server.stop()

        guard case .connecting(attempt: 1)? = seen.first else {
            Issue.record("the first update is not the first attempt: \(String(describing: seen.first))")
            return
        }
        #expect(seen.contains { if case .connected(let info) = $0 { info.id.hasPrefix("sess_") } else { false } })
        let events = seen.compactMap { if case .event(let event, let eventID) = $0 { (event, eventID) } else { nil } }
        #expect(events.allSatisfy { $0.1?.hasPrefix("event_") == true }, "every event carries its event_id")
        let reply = events.compactMap { event, _ -> String? in
            if case .responseOutputAudioTranscriptDone(_, let transcript) = event { transcript } else { nil }
        }
        #expect(reply == ["Hello from Parley."])
        #expect(events.contains { if case .responseDone(let response) = $0.0 { response.status == .completed } else { false } })
        #expect(!client.isConnected)
        #expect(client.send(.responseCreate()) == nil, "a stopped client sends nothing")
    }

    @Test func aServerWithoutLocalTokensMakesTheClientGiveUpWithAReason() async throws {
        let server = try ClientTestServer.start { $0.allowsLocalTokens = false }
        let tokens = LocalTokenSource(server: server.baseURL)
        let refusal = await #expect(throws: ProviderError.self) { try await tokens.fetch() }
        #expect(refusal?.category == .authentication && refusal?.isRetryable == false)

        let client = RealtimeClient(configuration: .init(server: server.baseURL), token: tokens.fetch)
        client.start()
        let seen = await Self.updates(of: client) { updates in
            updates.contains { if case .disconnected = $0 { true } else { false } }
        }
        await server.stop()
        guard case .disconnected(.tokenUnavailable(let reason), retryIn: nil)? = seen.last else {
            Issue.record("the client did not give up: \(seen)")
            return
        }
        #expect(reason == "Local tokens are off on this server; get a client token from your app's backend.")
    }

    @Test func anUnreachableServerIsRetriedWithBackoff() async throws {
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        let port = closed.port
        let configuration = RealtimeClient.Configuration(
            url: URL(string: "ws://127.0.0.1:\(port)/v1/realtime")!,
            backoff: ReconnectBackoff(steps: [.milliseconds(20), .milliseconds(40)], jitter: 0)
        )
        let client = RealtimeClient(configuration: configuration, token: { ClientTestServer.token() })
        client.start()
        let seen = await Self.updates(of: client) { updates in
            updates.filter { if case .disconnected = $0 { true } else { false } }.count == 3
        }
        client.stop()
        let waits = seen.compactMap { if case .disconnected(.unreachable, let retryIn) = $0 { retryIn } else { nil } }
        #expect(waits == [.milliseconds(20), .milliseconds(40), .milliseconds(40)])
        let attempts = seen.compactMap { if case .connecting(let attempt) = $0 { attempt } else { nil } }
        #expect(attempts == [1, 2, 3])
    }
}
