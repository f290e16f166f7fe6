import Foundation
import Testing
@testable import ParleyServer

@Suite struct ServerSettingsTests {
    @Test func preemptiveTranscriptionIsOnByDefaultAndCanBeTunedOrTurnedOff() {
        #expect(ServerSettings.load(environment: [:]).0.preemptiveTranscriptionAfterMs == 30)
        #expect(ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_TRANSCRIPTION_MS": "150"]).0.preemptiveTranscriptionAfterMs == 150)
        #expect(ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_TRANSCRIPTION_MS": "0"]).0.preemptiveTranscriptionAfterMs == nil)
    }

    @Test func theDefaultInstructionsSuitTheModel() {
        let bundled = ServerSettings.load(environment: [:]).0.systemPrompt
        #expect(bundled.contains("SmolLM") && !bundled.contains("Parley"), "SmolLM2 reads \"Parley\" as French")
        var remote = ServerSettings()
        remote.languageModel = .remote(baseURL: URL(fileURLWithPath: "/"), apiKey: nil, model: "llama3")
        #expect(!remote.systemPrompt.contains("SmolLM") && remote.systemPrompt.contains("voice assistant"))
        let configured = ServerSettings.load(environment: ["PARLEY_SYSTEM_PROMPT": "Be terse."]).0.systemPrompt
        #expect(configured == "Be terse.")
    }

    @Test func preemptiveGenerationIsOnByDefaultAndCanBeTurnedOff() {
        #expect(ServerSettings.load(environment: [:]).0.preemptiveGeneration)
        #expect(ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_GENERATION": "off"]).0.preemptiveGeneration == false)
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_GENERATION": "maybe"])
        #expect(problems == ["PARLEY_PREEMPTIVE_GENERATION: \"maybe\" is not true or false"])
        #expect(settings.preemptiveGeneration)
    }

    @Test func tlsNeedsBothFilesAndBothReadable() throws {
        #expect(ServerSettings.load(environment: [:]).0.tls == nil)
        let certificate = FileManager.default.temporaryDirectory.path + "/parley-settings-\(UUID().uuidString).pem"
        try Data("pem".utf8).write(to: URL(fileURLWithPath: certificate))
        defer { try? FileManager.default.removeItem(atPath: certificate) }
        let both = ServerSettings.load(environment: ["PARLEY_TLS_CERT": certificate, "PARLEY_TLS_KEY": certificate])
        #expect(both.problems.isEmpty && both.0.tls?.certificatePath == certificate)
        #expect(ServerSettings.load(environment: ["PARLEY_TLS_CERT": certificate]).problems
            == ["PARLEY_TLS_KEY (--tls-key): a private key is required with the TLS certificate"])
        #expect(ServerSettings.load(environment: ["PARLEY_TLS_CERT": certificate, "PARLEY_TLS_KEY": "/nonexistent/key.pem"]).problems
            == ["PARLEY_TLS_KEY (--tls-key): cannot read /nonexistent/key.pem"])
    }

    @Test func webRTCPortAndPublicAddressAreReadAndChecked() {
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_WEBRTC_PORT": "40000", "PARLEY_WEBRTC_PUBLIC_ADDRESS": "192.0.2.7"])
        #expect(problems.isEmpty)
        #expect(settings.webRTCPort == 40_000 && settings.webRTCPublicAddress == "192.0.2.7")
        let (_, refused) = ServerSettings.load(environment: ["PARLEY_WEBRTC_PUBLIC_ADDRESS": "example.com"])
        #expect(refused == ["PARLEY_WEBRTC_PUBLIC_ADDRESS: \"example.com\" is not an IPv4 address"])
    }

    @Test func theOutboundAllowListIsReadAndChecked() {
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_OUTBOUND_ALLOW": "127.0.0.1/32, 10.0.0.0/8,,fd00::/8 , ::1"])
        #expect(problems.isEmpty)
        #expect(settings.outboundAllowList.map(\.description) == ["127.0.0.1/32", "10.0.0.0/8", "fd00::/8", "::1/128"])
        #expect(ServerSettings.load(environment: [:]).0.outboundAllowList.isEmpty)
        let (_, refused) = ServerSettings.load(environment: ["PARLEY_OUTBOUND_ALLOW": "10.0.0.1/8,intranet,192.168.0.0/33"])
        #expect(refused == [
            #"PARLEY_OUTBOUND_ALLOW: "10.0.0.1/8" has bits set past its /8 prefix; did you mean 10.0.0.0/8?"#,
            #"PARLEY_OUTBOUND_ALLOW: "intranet" is not an IP address or CIDR block (such as 10.0.0.0/8 or fd00::/8)"#,
            #"PARLEY_OUTBOUND_ALLOW: "192.168.0.0/33": the prefix length must be a whole number from 0 to 32"#,
        ])
    }

    @Test func webRTCICEServersAreReadAndChecked() {
        let json = #"[{"urls":"stun:stun.example.org:3478"},{"urls":["turn:192.0.2.9:3478?transport=udp"],"username":"u","credential":"p"}]"#
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_WEBRTC_ICE_SERVERS": json])
        #expect(problems.isEmpty)
        #expect(settings.webRTCICEServers == [
            ICEServer(urls: ["stun:stun.example.org:3478"]),
            ICEServer(urls: ["turn:192.0.2.9:3478?transport=udp"], username: "u", credential: "p"),
        ])
        let refusals: [(String, String)] = [
            ("stun:example.org", #"not a JSON array of {"urls": …, "username": …, "credential": …}"#),
            (#"[{"urls":"http://example.org"}]"#, #""http://example.org" is not a stun:, stuns:, turn: or turns: URL"#),
            (#"[{"urls":"turn:192.0.2.9"}]"#, #""turn:192.0.2.9" needs a username and a credential"#),
            (#"[{"urls":[]}]"#, "a server without urls"),
        ]
        for (value, problem) in refusals {
            let (refused, said) = ServerSettings.load(environment: ["PARLEY_WEBRTC_ICE_SERVERS": value])
            #expect(said == ["PARLEY_WEBRTC_ICE_SERVERS: \(problem)"] && refused.webRTCICEServers.isEmpty, "\(value): \(said)")
        }
    }

    @Test func aBadValueIsOneClearProblem() {
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_TRANSCRIPTION_MS": "soon", "PARLEY_MAX_SESSIONS": "-1"])
        #expect(problems.contains("PARLEY_PREEMPTIVE_TRANSCRIPTION_MS: \"soon\" is not a whole number from 0 to 10000"))
        #expect(problems.contains("PARLEY_MAX_SESSIONS: \"-1\" is not a whole number from 1 to 100000"))
        #expect(settings.preemptiveTranscriptionAfterMs == 30)
    }

    @Test func aClusterMaximumNeedsTheSharedDatabase() {
        let alone = ServerSettings.load(environment: ["PARLEY_CLUSTER_MAX_SESSIONS": "900"]).0
        #expect(alone.clusterMaximumSessions == 900)
        #expect(alone.clusterProblems == ["PARLEY_CLUSTER_MAX_SESSIONS: needs PARLEY_DATABASE_URL or --database-url (the nodes of a cluster share one PostgreSQL)"])
        let clustered = ServerSettings.load(environment: [
            "PARLEY_CLUSTER_MAX_SESSIONS": "900", "PARLEY_DATABASE_URL": "postgresql://parley@db/parley", "PARLEY_NODE_URL": "http://10.0.0.5:8080",
        ]).0
        #expect(clustered.clusterProblems.isEmpty && clustered.nodeURL == "http://10.0.0.5:8080")
        #expect(ServerSettings.load(environment: ["PARLEY_CLUSTER_MAX_SESSIONS": "0"]).problems == ["PARLEY_CLUSTER_MAX_SESSIONS: \"0\" is not a whole number from 1 to 10000000"])
    }

    @Test func aNodeDrainsForTwentySecondsUnlessToldOtherwise() {
        #expect(ServerSettings.load(environment: [:]).0.drainSeconds == 20)
        #expect(ServerSettings.load(environment: ["PARLEY_DRAIN_SECONDS": "0"]).0.drainSeconds == 0)
        #expect(ServerSettings.load(environment: ["PARLEY_DRAIN_SECONDS": "90"]).0.drainSeconds == 90)
        #expect(ServerSettings.load(environment: ["PARLEY_DRAIN_SECONDS": "soon"]).problems == ["PARLEY_DRAIN_SECONDS: \"soon\" is not a whole number from 0 to 3600"])
    }

    @Test func aLocalModelPathMustBeAGGUFFileAndExcludesARemoteModel() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // The smallest GGUF file: magic, version 3, no tensors, no metadata.
        var header = Data("GGUF".utf8)
        for field in [UInt32(3).littleEndian] { withUnsafeBytes(of: field) { header.append(contentsOf: $0) } }
        for field in [UInt64(0).littleEndian, UInt64(0).littleEndian] { withUnsafeBytes(of: field) { header.append(contentsOf: $0) } }
        let model = folder.appendingPathComponent("mine.gguf")
        try header.write(to: model)
        let notAModel = folder.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: notAModel)

        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_LLM_MODEL_PATH": model.path])
        #expect(problems.isEmpty && settings.localLanguageModelPath == model.path && settings.languageModel == .embedded)

        let missing = ServerSettings.load(environment: ["PARLEY_LLM_MODEL_PATH": folder.appendingPathComponent("none.gguf").path])
        #expect(missing.problems.count == 1 && missing.problems[0].hasPrefix("PARLEY_LLM_MODEL_PATH (--llm-model): "), "\(missing.problems)")
        let text = ServerSettings.load(environment: ["PARLEY_LLM_MODEL_PATH": notAModel.path])
        #expect(text.problems == ["PARLEY_LLM_MODEL_PATH (--llm-model): \(notAModel.path) is not a GGUF model (no GGUF magic)"])
        let both = ServerSettings.load(environment: [
            "PARLEY_LLM_MODEL_PATH": model.path, "PARLEY_LLM_URL": "http://127.0.0.1:11434/v1", "PARLEY_LLM_MODEL": "llama3.2",
        ])
        #expect(both.problems == ["PARLEY_LLM_MODEL_PATH: a local model and PARLEY_LLM_URL exclude each other; set one"])
    }
}

extension ServerSettingsTests {
    @Test func aDatabaseURLSelectsPostgreSQLAndABadOneIsOneProblem() {
        #expect(ServerSettings.load(environment: [:]).0.databaseURL == nil)
        let url = "postgresql://parley:secret@db.internal:5432/parley?sslmode=require"
        #expect(ServerSettings.load(environment: ["PARLEY_DATABASE_URL": url]).0.databaseURL == url)
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_DATABASE_URL": "sqlite:///tmp/x"])
        #expect(problems == [#"PARLEY_DATABASE_URL: "sqlite:///tmp/x" is not a postgresql:// URL"#])
        #expect(settings.databaseURL == nil)
    }

    @Test func recordingsAreKeptThirtyDaysWithinAGigabyteUnlessToldOtherwise() {
        let defaults = ServerSettings.load(environment: [:]).0.recordingLimits
        #expect(defaults.retentionDays == 30 && defaults.quotaBytes == 1_024 * 1_048_576)
        let tuned = ServerSettings.load(environment: ["PARLEY_RECORDINGS_RETENTION_DAYS": "7", "PARLEY_RECORDINGS_QUOTA_MB": "50"])
        #expect(tuned.problems.isEmpty)
        #expect(tuned.0.recordingLimits.retentionDays == 7 && tuned.0.recordingLimits.quotaBytes == 50 * 1_048_576)
        for (retention, quota) in [("0", "0"), ("forever", "unlimited"), ("Forever", "UNLIMITED")] {
            let (settings, problems) = ServerSettings.load(environment: ["PARLEY_RECORDINGS_RETENTION_DAYS": retention, "PARLEY_RECORDINGS_QUOTA_MB": quota])
            #expect(problems.isEmpty)
            #expect(settings.recordingLimits.retentionDays == nil && settings.recordingLimits.quotaBytes == nil, "\(retention), \(quota)")
        }
        let (refused, problems) = ServerSettings.load(environment: ["PARLEY_RECORDINGS_RETENTION_DAYS": "-1", "PARLEY_RECORDINGS_QUOTA_MB": "1GB"])
        #expect(problems == [
            #"PARLEY_RECORDINGS_RETENTION_DAYS: "-1" is not a whole number of days from 1 to 36500, 0 or forever"#,
            #"PARLEY_RECORDINGS_QUOTA_MB: "1GB" is not a whole number of MB from 1 to 100000000, 0 or unlimited"#,
        ])
        #expect(refused.recordingLimits == RecordingLimits())
    }

    @Test func aMetricsTokenIsReadAndMustNotBeShort() {
        #expect(ServerSettings.load(environment: [:]).0.metricsToken == nil)
        #expect(ServerSettings.load(environment: ["PARLEY_METRICS_TOKEN": "scrape-0123456789abcdef"]).0.metricsToken == "scrape-0123456789abcdef")
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_METRICS_TOKEN": "short"])
        #expect(problems == ["PARLEY_METRICS_TOKEN: must be at least 16 characters"])
        #expect(settings.metricsToken == nil)
    }
}
