import Foundation
import ParleyTesting
import Testing
@testable import ParleyCore

/// Conformance with the official `openai` Python SDK: every server event this codec writes
/// validates against the SDK's pydantic models, and every client event the SDK writes decodes.
@Suite struct RealtimeSchemaTests {
    @Test(arguments: RealtimeDialect.allCases)
    func everyServerEventValidatesAgainstTheSDK(dialect: RealtimeDialect) async throws {
        let samples = RealtimeSamples.serverEvents(dialect: dialect)
        let lines = samples.compactMap { $0.encode(dialect: dialect) }
        let standardCount = samples.filter {
            if case .parley = $0 { return false }
            return $0.encode(dialect: dialect) != nil
        }.count
        #expect(standardCount > 40)

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("realtime-\(dialect)-\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }

        let result = try await PythonScript.run(
            "validate_server_events.py", arguments: ["--dialect", dialect.rawValue, file.path]
        )
        #expect(result.status == 0, "validator failed:\n\(result.output)\n\(result.errors)")
        #expect(result.output.contains("validated \(standardCount) events (dialect \(dialect.rawValue), skipped 1)"), "\(result.output)")
    }

    @Test func theSamplesCoverEveryServerEventCase() {
        let covered = Set(RealtimeSamples.serverEvents(dialect: .ga).map(RealtimeSamples.caseName))
        #expect(covered == RealtimeSamples.allServerCaseNames)
    }

    @Test func eventsWithoutABetaFormEncodeToNothingInBeta() {
        let item = RealtimeItem.message(id: "item_1", role: .user, content: [.inputText("hi")])
        #expect(RealtimeServerEvent.conversationItemDone(item, previousItemID: nil).encode(dialect: .beta) == nil)
        #expect(RealtimeServerEvent.inputAudioBufferTimeoutTriggered(itemID: "i", audioStartMs: 0, audioEndMs: 1)
            .encode(dialect: .beta) == nil)
        #expect(RealtimeServerEvent.conversationItemDone(item, previousItemID: nil).encode(dialect: .ga) != nil)
    }

    @Test(arguments: RealtimeDialect.allCases)
    func clientEventsWrittenByTheSDKDecode(dialect: RealtimeDialect) async throws {
        let result = try await PythonScript.run("emit_client_events.py", arguments: ["--dialect", dialect.rawValue])
        try #require(result.status == 0, "emitter failed:\n\(result.errors)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 16)

        var decoded: [String: RealtimeClientEvent] = [:]
        for line in lines {
            do throws(RealtimeProtocolError) {
                let event = try RealtimeClientEvent.decode(line, dialect: dialect)
                decoded[event.eventID ?? ""] = event
            } catch {
                Issue.record("\(line.prefix(120)) failed to decode: \(error.message) (\(error.param ?? "-"))")
            }
        }

        let tools = [ToolDefinition(
            name: "get_weather", description: "Looks up the weather in a city.",
            parameters: .object([
                "type": .string("object"),
                "properties": .object(["city": .object(["type": .string("string"), "description": .string("The city.")])]),
                "required": .array([.string("city")]),
            ])
        )]
        let vad = ServerVADSettings(
            threshold: 0.6, prefixPaddingMs: 200, silenceDurationMs: 400, idleTimeoutMs: dialect == .ga ? 6000 : nil,
            createResponse: false, interruptResponse: true
        )
        let full = RealtimeSessionSettings(
            instructions: "Be brief.", voice: dialect == .ga ? "marin" : "verse", speed: 1.1,
            outputModalities: [.audio], inputAudioFormat: .pcm16, outputAudioFormat: .pcm16,
            turnDetection: .serverVAD(vad), inputTranscription: .enabled(model: "whisper-1", language: "en", prompt: "Parley"),
            tools: tools, toolChoice: .required, temperature: dialect == .ga ? nil : 0.7, maxOutputTokens: .limited(512),
            noiseReduction: .some(dialect == .ga ? .nearField : .farField)
        )
        #expect(decoded["evt_session_update_full"] == .sessionUpdate(full, eventID: "evt_session_update_full"))
        #expect(decoded["evt_session_update_manual"] == .sessionUpdate(
            RealtimeSessionSettings(turnDetection: .manual, inputTranscription: .disabled), eventID: "evt_session_update_manual"
        ))
        #expect(decoded["evt_session_update_semantic"] == .sessionUpdate(
            RealtimeSessionSettings(
                outputModalities: [.text], turnDetection: .serverVAD(ServerVADSettings(createResponse: true, eagerness: .high)),
                toolChoice: .function("get_weather"), maxOutputTokens: .unlimited
            ),
            eventID: "evt_session_update_semantic"
        ))
        guard case .inputAudioBufferAppend(let audio, _)? = decoded["evt_append"] else {
            Issue.record("append: \(String(describing: decoded["evt_append"]))")
            return
        }
        #expect(try PCM16Buffer(base64: audio).samples == (-240..<240).map { Int16($0) })
        #expect(decoded["evt_commit"] == .inputAudioBufferCommit(eventID: "evt_commit"))
        #expect(decoded["evt_clear"] == .inputAudioBufferClear(eventID: "evt_clear"))
        #expect(decoded["evt_item_user_text"] == .conversationItemCreate(
            item: .message(id: nil, role: .user, content: [.inputText("What's the weather in Oslo?")]),
            eventID: "evt_item_user_text"
        ))
        #expect(decoded["evt_item_function_call_output"] == .conversationItemCreate(
            item: .functionCallOutput(id: nil, callID: "call_42", output: #"{"celsius": 12}"#), previousItemID: "item_call",
            eventID: "evt_item_function_call_output"
        ))
        #expect(decoded["evt_item_assistant_text"] == .conversationItemCreate(
            item: .message(id: "item_assistant", role: .assistant, content: [.outputText("It is 12 degrees.")], status: .completed),
            eventID: "evt_item_assistant_text"
        ))
        #expect(decoded["evt_truncate"] == .conversationItemTruncate(
            itemID: "item_assistant", contentIndex: 0, audioEndMs: 1500, eventID: "evt_truncate"
        ))
        #expect(decoded["evt_delete"] == .conversationItemDelete(itemID: "item_old", eventID: "evt_delete"))
        #expect(decoded["evt_retrieve"] == .conversationItemRetrieve(itemID: "item_old", eventID: "evt_retrieve"))
        #expect(decoded["evt_response_create_plain"] == .responseCreate(nil, eventID: "evt_response_create_plain"))
        #expect(decoded["evt_response_create_options"] == .responseCreate(
            RealtimeResponseOptions(
                instructions: "Answer in French.", outputModalities: [.text], tools: tools, toolChoice: .auto,
                conversation: .outOfBand, metadata: ["topic": "weather"], voice: "cedar", maxOutputTokens: .limited(64),
                temperature: dialect == .ga ? nil : 0.9
            ),
            eventID: "evt_response_create_options"
        ))
        #expect(decoded["evt_cancel"] == .responseCancel(responseID: "resp_1", eventID: "evt_cancel"))
        #expect(decoded["evt_output_clear"] == .outputAudioBufferClear(eventID: "evt_output_clear"))
    }
}

/// Representative instances of every server event.
enum RealtimeSamples {
    static let position = RealtimeContentPosition(responseID: "resp_1", itemID: "item_2", outputIndex: 0, contentIndex: 0)

    static let weatherTool = ToolDefinition(
        name: "get_weather", description: "Looks up the weather.",
        parameters: .object([
            "type": .string("object"), "properties": .object(["city": .object(["type": .string("string")])]),
        ])
    )

    static func session(_ settings: RealtimeSessionSettings) -> RealtimeSessionInfo {
        RealtimeSessionInfo(id: "sess_1", model: "parley", expiresAt: 1_700_000_000, settings: settings)
    }

    static let fullSettings = RealtimeSessionSettings(
        instructions: "Be brief \"and\" kind.\nAlways.", voice: "alloy", speed: 1.0, outputModalities: [.audio],
        inputAudioFormat: .pcm16, outputAudioFormat: .pcm16, turnDetection: .serverVAD(ServerVADSettings(idleTimeoutMs: 5000)),
        inputTranscription: .enabled(model: "whisper-1", language: "en", prompt: nil), tools: [weatherTool],
        toolChoice: .auto, temperature: 0.8, maxOutputTokens: .unlimited, noiseReduction: .some(.farField)
    )

    static let textOnlySettings = RealtimeSessionSettings(
        instructions: "", voice: "verse", speed: 1.25, outputModalities: [.text], inputAudioFormat: .pcm16,
        outputAudioFormat: .pcm16, turnDetection: .manual, inputTranscription: .disabled, tools: [],
        toolChoice: ToolChoice.none, temperature: nil, maxOutputTokens: .limited(300), noiseReduction: .some(nil)
    )

    static func items(dialect: RealtimeDialect) -> [RealtimeItem] {
        var items: [RealtimeItem] = [
            .message(id: "item_u", role: .user, content: [.inputAudio(audio: nil, transcript: nil)], status: .completed),
            .message(id: "item_u2", role: .user, content: [.inputText("Hello"), .inputAudio(audio: "AAAA", transcript: "hi")], status: .completed),
            .message(id: "item_a", role: .assistant, content: [.outputAudio(audio: nil, transcript: "Hi there")], status: .incomplete),
            .message(id: "item_a2", role: .assistant, content: [.outputText("Written.")], status: .inProgress),
            .message(id: "item_s", role: .system, content: [.inputText("Be nice.")], status: .completed),
            .functionCall(id: "item_f", callID: "call_1", name: "get_weather", arguments: #"{"city":"Oslo"}"#, status: .completed),
            .functionCallOutput(id: "item_o", callID: "call_1", output: #"{"celsius":12}"#, status: .completed),
        ]
        if dialect == .ga {
            items.append(.message(id: "item_i", role: .user, content: [.inputImage(url: "data:image/png;base64,AAAA")]))
        }
        return items
    }

    static func responses() -> [RealtimeResponse] {
        let spoken = RealtimeItem.message(id: "item_2", role: .assistant, content: [.outputAudio(audio: nil, transcript: "Hi")], status: .completed)
        let failure = RealtimeProtocolError(type: "server_error", code: "response_failed", message: "The model is down.")
        return [
            RealtimeResponse(id: "resp_1", status: .inProgress, conversationID: "conv_1", voice: "alloy"),
            RealtimeResponse(
                id: "resp_1", status: .completed, output: [spoken], usage: RealtimeUsage(inputTokens: 12, outputTokens: 5),
                conversationID: "conv_1", voice: "alloy", maxOutputTokens: .unlimited, metadata: ["topic": "weather"]
            ),
            RealtimeResponse(
                id: "resp_2", status: .cancelled, statusDetails: RealtimeResponseStatusDetails(reason: .turnDetected),
                output: [spoken], conversationID: "conv_1"
            ),
            RealtimeResponse(
                id: "resp_3", status: .cancelled, statusDetails: RealtimeResponseStatusDetails(reason: .clientCancelled),
                outputModalities: [.text]
            ),
            RealtimeResponse(id: "resp_4", status: .failed, statusDetails: RealtimeResponseStatusDetails(error: failure)),
            RealtimeResponse(
                id: "resp_5", status: .incomplete, statusDetails: RealtimeResponseStatusDetails(reason: .maxOutputTokens),
                maxOutputTokens: .limited(10)
            ),
        ]
    }

    static func serverEvents(dialect: RealtimeDialect) -> [RealtimeServerEvent] {
        var events: [RealtimeServerEvent] = [
            .sessionCreated(session(fullSettings)),
            .sessionCreated(session(RealtimeSessionSettings())),
            .sessionUpdated(session(textOnlySettings)),
            .sessionUpdated(session(RealtimeSessionSettings(turnDetection: .serverVAD(ServerVADSettings(interruptResponse: false, eagerness: .low))))),
            .sessionUpdated(session(fullSettings.merging(RealtimeSessionSettings(toolChoice: .function("get_weather"))))),
            .conversationCreated(id: "conv_1"),
            .inputAudioBufferSpeechStarted(itemID: "item_1", audioStartMs: 120),
            .inputAudioBufferSpeechStopped(itemID: "item_1", audioEndMs: 1880),
            .inputAudioBufferCommitted(itemID: "item_1", previousItemID: nil),
            .inputAudioBufferCommitted(itemID: "item_3", previousItemID: "item_2"),
            .inputAudioBufferCleared,
            .inputAudioBufferTimeoutTriggered(itemID: "item_4", audioStartMs: 0, audioEndMs: 5000),
        ]
        for item in items(dialect: dialect) {
            events.append(.conversationItemAdded(item, previousItemID: "item_0"))
            events.append(.conversationItemDone(item, previousItemID: nil))
            events.append(.conversationItemRetrieved(item))
            events.append(.responseOutputItemAdded(responseID: "resp_1", outputIndex: 0, item: item))
            events.append(.responseOutputItemDone(responseID: "resp_1", outputIndex: 1, item: item))
        }
        events += [
            .inputAudioTranscriptionDelta(itemID: "item_1", contentIndex: 0, delta: "Hel"),
            .inputAudioTranscriptionCompleted(itemID: "item_1", contentIndex: 0, transcript: "Hello.", usage: .duration(seconds: 1.76)),
            .inputAudioTranscriptionCompleted(itemID: "item_1", contentIndex: 0, transcript: "Hello.", usage: .tokens(input: 20, output: 3)),
            .inputAudioTranscriptionFailed(
                itemID: "item_1", contentIndex: 0,
                error: RealtimeProtocolError(type: "server_error", code: "transcription_failed", message: "ASR is down.")
            ),
            .conversationItemTruncated(itemID: "item_2", contentIndex: 0, audioEndMs: 1500),
            .conversationItemDeleted(itemID: "item_2"),
        ]
        for response in responses() {
            events.append(.responseCreated(response))
            events.append(.responseDone(response))
        }
        events += [
            .responseContentPartAdded(position, part: .outputAudio(audio: nil, transcript: "")),
            .responseContentPartAdded(position, part: .outputText("")),
            .responseContentPartDone(position, part: .outputAudio(audio: nil, transcript: "Hi there")),
            .responseContentPartDone(position, part: .outputText("Hi there")),
            .responseOutputAudioDelta(position, delta: PCM16Buffer(samples: [0, 1, -1, 32767, -32768]).base64EncodedString()),
            .responseOutputAudioDone(position),
            .responseOutputAudioTranscriptDelta(position, delta: "Hi "),
            .responseOutputAudioTranscriptDone(position, transcript: "Hi there"),
            .responseOutputTextDelta(position, delta: "Hi \u{1F44B} \"quoted\"\n"),
            .responseOutputTextDone(position, text: "Hi \u{1F44B} \"quoted\"\n"),
            .responseFunctionCallArgumentsDelta(responseID: "resp_1", itemID: "item_f", outputIndex: 1, callID: "call_1", delta: #"{"ci"#),
            .responseFunctionCallArgumentsDone(
                responseID: "resp_1", itemID: "item_f", outputIndex: 1, callID: "call_1", name: "get_weather", arguments: #"{"city":"Oslo"}"#
            ),
            .outputAudioBufferStarted(responseID: "resp_1"),
            .outputAudioBufferStopped(responseID: "resp_1"),
            .outputAudioBufferCleared(responseID: "resp_2"),
            .rateLimitsUpdated([
                RealtimeRateLimit(name: "requests", limit: 1000, remaining: 999, resetSeconds: 60),
                RealtimeRateLimit(name: "tokens", limit: 50_000, remaining: 49_000, resetSeconds: 0.5),
            ]),
            .error(RealtimeProtocolError(code: "invalid_value", message: "Bad.", param: "session.voice", eventID: "evt_1")),
            .error(RealtimeProtocolError(code: "unknown_event", message: "Unknown event type 'x'.")),
            .parley(type: "parley.turn_metrics", payload: .object(["first_audio_ms": .number(312), "stage": .string("tts")])),
        ] + mcpEvents
        return events
    }

    /// The MCP events and items (GA only: they encode to nothing in beta).
    static var mcpEvents: [RealtimeServerEvent] {
        let tools = [MCPToolDescription(
            name: "add", description: "Adds.", inputSchema: .object(["type": .string("object")]), annotations: .object(["readOnlyHint": .bool(true)])
        )]
        let failure = MCPFailure(.http, code: 503, message: "MCP server \"shop\" could not be reached")
        var settings = RealtimeSessionSettings()
        settings.mcpServers = [
            MCPServerConfiguration(label: "shop", url: URL(string: "https://mcp.example.com/mcp")!, authorization: "secret", headers: ["X-Key": "k"]),
            MCPServerConfiguration(
                label: "calc", url: URL(string: "http://127.0.0.1:9/mcp")!, allowedTools: MCPToolFilter(toolNames: ["add"]),
                requireApproval: .filter(always: nil, never: MCPToolFilter(readOnly: true))
            ),
        ]
        return [
            .sessionUpdated(session(settings)),
            .conversationItemAdded(RealtimeItem(id: "item_l", kind: .mcpListTools(serverLabel: "shop", tools: [])), previousItemID: nil),
            .mcp(.listToolsInProgress(itemID: "item_l")),
            .mcp(.listToolsCompleted(itemID: "item_l")),
            .mcp(.listToolsFailed(itemID: "item_l")),
            .conversationItemDone(RealtimeItem(id: "item_l", kind: .mcpListTools(serverLabel: "shop", tools: tools)), previousItemID: nil),
            .responseOutputItemAdded(responseID: "resp_1", outputIndex: 0, item: RealtimeItem(id: "item_c", kind: .mcpCall(
                serverLabel: "shop", name: "add", arguments: "", approvalRequestID: nil, output: nil, error: nil
            ))),
            .mcp(.callArgumentsDelta(responseID: "resp_1", itemID: "item_c", outputIndex: 0, delta: #"{"a":1}"#)),
            .mcp(.callArgumentsDone(responseID: "resp_1", itemID: "item_c", outputIndex: 0, arguments: #"{"a":1}"#)),
            .mcp(.callInProgress(itemID: "item_c", outputIndex: 0)),
            .mcp(.callCompleted(itemID: "item_c", outputIndex: 0)),
            .mcp(.callFailed(itemID: "item_c", outputIndex: 0)),
            .responseOutputItemDone(responseID: "resp_1", outputIndex: 0, item: RealtimeItem(id: "item_c", kind: .mcpCall(
                serverLabel: "shop", name: "add", arguments: #"{"a":1}"#, approvalRequestID: "item_r", output: "1", error: nil
            ))),
            .conversationItemDone(RealtimeItem(id: "item_c", kind: .mcpCall(
                serverLabel: "shop", name: "add", arguments: #"{"a":1}"#, approvalRequestID: nil, output: nil, error: failure
            )), previousItemID: nil),
            .conversationItemDone(RealtimeItem(id: "item_c", kind: .mcpCall(
                serverLabel: "shop", name: "add", arguments: "{}", approvalRequestID: nil, output: nil,
                error: MCPFailure(.toolExecution, message: "closed")
            )), previousItemID: nil),
            .conversationItemDone(RealtimeItem(id: "item_r", kind: .mcpApprovalRequest(serverLabel: "shop", name: "add", arguments: "{}")), previousItemID: nil),
            .conversationItemDone(RealtimeItem(id: "item_a", kind: .mcpApprovalResponse(
                approvalRequestID: "item_r", approve: false, reason: "not now"
            )), previousItemID: nil),
        ]
    }

    /// Every case of `RealtimeServerEvent`; `caseName` keeps it exhaustive.
    static let allServerCaseNames: Set<String> = [
        "sessionCreated", "sessionUpdated", "conversationCreated", "inputAudioBufferSpeechStarted", "inputAudioBufferSpeechStopped",
        "inputAudioBufferCommitted", "inputAudioBufferCleared", "inputAudioBufferTimeoutTriggered", "conversationItemAdded",
        "conversationItemDone", "inputAudioTranscriptionDelta", "inputAudioTranscriptionCompleted",
        "inputAudioTranscriptionFailed", "conversationItemTruncated", "conversationItemDeleted", "conversationItemRetrieved",
        "responseCreated", "responseDone", "responseOutputItemAdded", "responseOutputItemDone", "responseContentPartAdded",
        "responseContentPartDone", "responseOutputAudioDelta", "responseOutputAudioDone", "responseOutputAudioTranscriptDelta",
        "responseOutputAudioTranscriptDone", "responseOutputTextDelta", "responseOutputTextDone",
        "responseFunctionCallArgumentsDelta", "responseFunctionCallArgumentsDone", "outputAudioBufferStarted",
        "outputAudioBufferStopped", "outputAudioBufferCleared", "rateLimitsUpdated", "error", "parley", "mcp",
    ]

    /// The case's name; the switch makes the compiler flag a new case until it is listed.
    static func caseName(_ event: RealtimeServerEvent) -> String {
        switch event {
        case .sessionCreated: "sessionCreated"
        case .sessionUpdated: "sessionUpdated"
        case .conversationCreated: "conversationCreated"
        case .inputAudioBufferSpeechStarted: "inputAudioBufferSpeechStarted"
        case .inputAudioBufferSpeechStopped: "inputAudioBufferSpeechStopped"
        case .inputAudioBufferCommitted: "inputAudioBufferCommitted"
        case .inputAudioBufferCleared: "inputAudioBufferCleared"
        case .inputAudioBufferTimeoutTriggered: "inputAudioBufferTimeoutTriggered"
        case .conversationItemAdded: "conversationItemAdded"
        case .conversationItemDone: "conversationItemDone"
        case .inputAudioTranscriptionDelta: "inputAudioTranscriptionDelta"
        case .inputAudioTranscriptionCompleted: "inputAudioTranscriptionCompleted"
        case .inputAudioTranscriptionFailed: "inputAudioTranscriptionFailed"
        case .conversationItemTruncated: "conversationItemTruncated"
        case .conversationItemDeleted: "conversationItemDeleted"
        case .conversationItemRetrieved: "conversationItemRetrieved"
        case .responseCreated: "responseCreated"
        case .responseDone: "responseDone"
        case .responseOutputItemAdded: "responseOutputItemAdded"
        case .responseOutputItemDone: "responseOutputItemDone"
        case .responseContentPartAdded: "responseContentPartAdded"
        case .responseContentPartDone: "responseContentPartDone"
        case .responseOutputAudioDelta: "responseOutputAudioDelta"
        case .responseOutputAudioDone: "responseOutputAudioDone"
        case .responseOutputAudioTranscriptDelta: "responseOutputAudioTranscriptDelta"
        case .responseOutputAudioTranscriptDone: "responseOutputAudioTranscriptDone"
        case .responseOutputTextDelta: "responseOutputTextDelta"
        case .responseOutputTextDone: "responseOutputTextDone"
        case .responseFunctionCallArgumentsDelta: "responseFunctionCallArgumentsDelta"
        case .responseFunctionCallArgumentsDone: "responseFunctionCallArgumentsDone"
        case .outputAudioBufferStarted: "outputAudioBufferStarted"
        case .outputAudioBufferStopped: "outputAudioBufferStopped"
        case .outputAudioBufferCleared: "outputAudioBufferCleared"
        case .rateLimitsUpdated: "rateLimitsUpdated"
        case .error: "error"
        case .parley: "parley"
        case .mcp: "mcp"
        }
    }
}

/// Runs the scripts in `scripts/realtime-schema` with the harness Python.
enum PythonScript {
    /// What a finished script printed.
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    /// The Python with the `openai` SDK: `$PARLEY_PYTHON`, else the setup's venv.
    static var python: String {
        ProcessInfo.processInfo.environment["PARLEY_PYTHON"]
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/parley/venv/bin/python").path
    }

    /// Runs `scripts/realtime-schema/<script>` and awaits its exit (killed after `deadline`).
    static func run(_ script: String, arguments: [String], deadline: Duration = .seconds(120)) async throws -> Result {
        let python = python
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "No Python at \(python): run scripts/setup or set PARLEY_PYTHON to a Python with the openai SDK."
        )
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let scriptPath = repository.appendingPathComponent("scripts/realtime-schema/\(script)").path
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("realtime-script-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outputFile = scratch.appendingPathComponent("stdout")
        let errorFile = scratch.appendingPathComponent("stderr")
        try Data().write(to: outputFile)
        try Data().write(to: errorFile)

        let process = Subprocess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [scriptPath] + arguments
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        var watchdog: Task<Void, Never>?
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { finished in continuation.resume(returning: finished.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            let pid = process.processIdentifier
            watchdog = Task {
                guard (try? await Task.sleep(for: deadline)) != nil else { return }
                kill(pid, SIGKILL)
            }
        }
        watchdog?.cancel()
        return Result(
            status: status,
            output: (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        )
    }
}
