import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// An agent's vocabulary: checked when the agent is written (clear errors naming the entry),
/// kept, and added to the recognizer's prompt in the agent's sessions.
@Suite struct AgentVocabularyTests {
    @Test(arguments: [
        (["Quaxtonby", "Parley", "Ørsted A/S"], nil),
        ([""], "vocabulary[0]: must be 1 to 50 characters"),
        (["Parley", "   "], "vocabulary[1]: must be 1 to 50 characters"),
        ([String(repeating: "x", count: 51)], "vocabulary[0]: must be 1 to 50 characters"),
        (["Quax\ntonby"], "vocabulary[0]: must be one line without control characters"),
        (Array(repeating: "Parley", count: 101), "vocabulary: at most 100 words or phrases"),
        (Array(repeating: String(repeating: "y", count: 40), count: 20), "vocabulary: at most 600 characters in all"),
    ] as [([String], String?)])
    func theVocabularyIsChecked(vocabulary: [String], problem: String?) throws {
        let agent = try JSONDecoder().decode(AgentDefinition.self, from: JSONEncoder().encode(["vocabulary": vocabulary]))
        let problems = agent.validationProblems()
        if let problem {
            #expect(problems.contains { $0.hasPrefix(problem) }, "\(problems)")
        } else {
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    @Test func anAgentWithABadVocabularyIsRefusedByTheEntry() async throws {
        let server = try TestServer.start()
        let response = try await server.request("POST", "/v1/agents", json: #"{"name":"Desk","vocabulary":["Parley",""]}"#)
        #expect(response.status == 400)
        #expect(response.body["error"]?["message"]?.stringValue?.contains("vocabulary[1]") == true, "\(response.body.jsonText)")
        await server.stop()
    }

    @Test func theAgentsVocabularyReachesTheRecognizersPrompt() async throws {
        let recognizer = ScriptedSpeechRecognizer(results: [.success("Send it to Mister Quaxtonby.")])
        var providers = TestServer.testProviders()
        providers.recognizer = recognizer
        let server = try TestServer.start(providers: providers)
        let created = try await server.request("POST", "/v1/agents", json: #"{"name":"Desk","vocabulary":["Quaxtonby"," Parley "]}"#)
        #expect(created.status == 201 || created.status == 200, "\(created.body.jsonText)")
        #expect(created.body["vocabulary"] == ["Quaxtonby", " Parley "])
        let agentID = try #require(created.body["id"]?.stringValue)
        let client = try await RealtimeTestClient.connect(server, query: "?agent=\(agentID)")
        #expect(await client.next("session.created") != nil)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null,"transcription":{"model":"whisper-1","prompt":"Invoices."}}}}}"#)
        #expect(await client.next("session.updated") != nil)
        let speech = PCM16Buffer(samples: [Int16](repeating: 2_000, count: 12_000)).base64EncodedString()
        try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(speech)"}"#)
        try client.send(#"{"type":"input_audio_buffer.commit"}"#)
        #expect(await client.next("conversation.item.input_audio_transcription.completed") != nil)
        #expect(recognizer.hints.last?.prompt == "Invoices. Quaxtonby, Parley.", "\(recognizer.hints)")
        client.socket.close()
        await server.stop()
    }
}
