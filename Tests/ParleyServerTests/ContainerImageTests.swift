import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing

/// The container image `scripts/image` builds, run as an orchestrator would run it: its own
/// command, configuration from the environment, its data in a volume. Under `buildah run
/// --isolation chroot` on the host's network, on a free loopback port. Skipped, with the reason,
/// where buildah cannot run the image (scripts/test builds it first when buildah works).
@Suite(.serialized) struct ContainerImageTests {
    static let secret = "container-image-secret-0123456789"

    /// A request with the server secret: the status and the decoded body.
    static func rest(_ container: BuildahContainer, _ method: String, _ path: String, _ body: String? = nil) async throws -> (status: Int, body: JSONValue) {
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: container.baseURL.appendingPathComponent(path), method: method,
            headers: ["Authorization": "Bearer \(secret)", "Content-Type": "application/json"], body: body.map { Data($0.utf8) }
        ))
        return (response.status, (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null)
    }

    /// The image, or a cancelled (skipped) test saying why it cannot run here.
    static func image() async throws -> ContainerImage {
        switch await ContainerImage.locate() {
        case .success(let image): return image
        case .failure(let skip): try Test.cancel(Comment(rawValue: skip.description))
        }
    }

    @Test("the image describes a service: non-root user, data volume, health check on /healthz, parley serve")
    func theImageIsConfiguredAsAService() async throws {
        let image = try await Self.image()
        #expect(image.command == ["parley", "serve"])
        #expect(!["", "root", "0"].contains(image.config["User"]?.stringValue ?? ""), "\(image.config["User"]?.jsonText ?? "no user")")
        let dataDirectory = try #require(image.environment("PARLEY_DATA_DIR"))
        #expect(image.config["Volumes"]?[dataDirectory] != nil, "the data directory \(dataDirectory) is no volume")
        #expect(image.environment("PARLEY_HOST") == "0.0.0.0")
        let healthCheck = image.config["Healthcheck"]?["Test"]?.arrayElements?.compactMap(\.stringValue) ?? []
        #expect(healthCheck.first == "CMD-SHELL" && healthCheck.last?.contains("/healthz") == true, "\(healthCheck)")
        #expect(image.config["StopSignal"]?.stringValue == "SIGTERM")
    }

    @Test("started from the image: serves the page, answers a spoken turn, and keeps its data across a restart")
    func theImageServesAndKeepsItsData() async throws {
        let image = try await Self.image()
        let volume = FileManager.default.temporaryDirectory.appendingPathComponent("parley-volume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: volume) }
        let environment = ["PARLEY_SERVER_SECRET": Self.secret]

        // The first container: the volume belongs to the image's user, as a volume driver sets it up.
        let first = try await BuildahContainer(image, environment: environment, volume: volume, port: try ClosedPort().port)
        let agentID: String, conversationID: String
        do {
            let owner = try await first.exec(["id", "-u"])
            let uid = try #require(Int(owner.output.trimmingCharacters(in: .whitespacesAndNewlines)), "id -u: \(owner.output)")
            try FileManager.default.setAttributes([.ownerAccountID: uid, .groupOwnerAccountID: uid], ofItemAtPath: volume.path)
            try first.start()
            try await first.waitUntilReady()

            let page = try await HTTPClient.shared.send(HTTPClient.Request(url: first.baseURL.appendingPathComponent("/")))
            #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("<html"), "GET / answered \(page.status)")
            // The image's own health check, run inside the container as the orchestrator runs it.
            let healthCheck = try #require(image.config["Healthcheck"]?["Test"]?.arrayElements?.last?.stringValue)
            let healthy = try await first.exec(["/bin/sh", "-c", healthCheck])
            #expect(healthy.status == 0, "the health check failed: \(healthy.output)")

            let agent = try await Self.rest(first, "POST", "/v1/agents", #"{"name":"Kept in the volume"}"#)
            agentID = try #require(agent.body["id"]?.stringValue, "\(agent.body.jsonText)")
            let instance = try await Self.rest(first, "POST", "/v1/agents/\(agentID)/instances", #"{"user":"ada"}"#)
            let instanceID = try #require(instance.body["id"]?.stringValue, "\(instance.body.jsonText)")
            conversationID = try #require(instance.body["conversation_id"]?.stringValue)
            let token = try #require(instance.body["client_secret"]?["value"]?.stringValue)

            // A spoken question over the realtime protocol, answered by the image's embedded stack.
            let client = try await ProcessRealtimeClient.connect(port: first.baseURL.port!, query: "?instance=\(instanceID)", token: token)
            #expect(await client.next("session.created") != nil)
            try client.socket.send(.text(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#))
            #expect(await client.next("session.updated") != nil)
            let speech = try await TestVoice.flite("slt").speak("What is the capital of France?")
            for event in RealtimeSpeech.appendEvents(speech) { try client.socket.send(.text(event)) }
            try client.socket.send(.text(#"{"type":"input_audio_buffer.commit"}"#))
            try client.socket.send(.text(#"{"type":"response.create"}"#))
            let heard = await client.next("conversation.item.input_audio_transcription.completed", seconds: 60)?["transcript"]?.stringValue?.lowercased() ?? ""
            #expect(heard.contains("capital") && heard.contains("france"), "heard: \(heard)")
            let done = await client.next("response.done", seconds: 120)
            #expect(done?["response"]?["status"]?.stringValue == "completed", "\(done?.jsonText ?? "no response.done")")
            #expect(await client.events.contains { $0["type"]?.stringValue == "response.output_audio.delta" }, "no audio in the answer")
            client.close()

            #expect(await first.stop() == 0, "the server did not stop cleanly on SIGTERM:\n\(first.log.suffix(2_000))")
        } catch {
            await first.remove()
            throw error
        }
        await first.remove()

        // A new container from the same image on the same volume: what was stored is there.
        let second = try await BuildahContainer(image, environment: environment, volume: volume, port: try ClosedPort().port)
        do {
            try second.start()
            try await second.waitUntilReady()
            let agent = try await Self.rest(second, "GET", "/v1/agents/\(agentID)")
            #expect(agent.status == 200 && agent.body["name"]?.stringValue == "Kept in the volume", "\(agent.body.jsonText)")
            let items = try await Self.rest(second, "GET", "/v1/conversations/\(conversationID)/items").body["data"]?.arrayElements ?? []
            let roles = items.compactMap { $0["role"]?.stringValue }
            #expect(roles.starts(with: ["user", "assistant"]), "\(items)")
            #expect(items.first?["text"]?.stringValue?.lowercased().contains("france") == true, "\(items)")
            #expect(await second.stop() == 0)
        } catch {
            await second.remove()
            throw error
        }
        await second.remove()
    }
}
