import Foundation
import ParleyCore
import ParleyLocal
import ParleyServer
import ParleySync
import Testing

/// The embedded Whisper model: tiny.en by default, base by name (`PARLEY_ASR_MODEL`,
/// `--asr-model`), tiny.en with one warning line and a status component that says so when
/// base cannot load.
@Suite struct WhisperModelSelectionTests {
    @Test func tinyEnglishIsTheDefaultAndBaseIsChosenByName() {
        #expect(ServerSettings.load(environment: [:]).0.whisperModel == .tinyEnglish)
        let (base, problems) = ServerSettings.load(environment: ["PARLEY_ASR_MODEL": "Base"])
        #expect(base.whisperModel == .base && problems.isEmpty)
        #expect(ServerSettings.load(environment: ["PARLEY_ASR_MODEL": "large-v3"]).problems
            == [#"PARLEY_ASR_MODEL (--asr-model): "large-v3" is not a Whisper model setup installs (use tiny.en or base)"#])
        // With an OpenAI-compatible service the variable names the service's model.
        let (remote, remoteProblems) = ServerSettings.load(environment: ["PARLEY_ASR_URL": "http://127.0.0.1:9/v1", "PARLEY_ASR_MODEL": "large-v3"])
        #expect(remoteProblems.isEmpty && remote.whisperModel == .tinyEnglish)
        #expect(remote.speechRecognition == .remote(baseURL: URL(string: "http://127.0.0.1:9/v1")!, apiKey: nil, model: "large-v3"))
    }

    @Test func baseLoadsAndTheStatusNamesIt() async throws {
        var settings = ServerSettings()
        settings.whisperModel = .base
        let chosen = try ProviderFactory.recognizer(settings, warn: { Issue.record("warned: \($0)") })
        #expect(chosen.summary.name == "whisper.cpp base")
        #expect(chosen.recognizer.languages?.contains("de") == true)
        let tiny = try ProviderFactory.recognizer(ServerSettings(), warn: { Issue.record("warned: \($0)") })
        #expect(tiny.summary.name == "whisper.cpp tiny.en" && tiny.recognizer.languages == ["en"])
    }

    @Test(arguments: [false, true]) func aMissingOrCorruptBaseModelFallsBackToTinyEnglish(corrupt: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("whisper-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("ggml-tiny.en.bin").path, withDestinationPath: try ModelLocator().path(of: .whisperTinyEnglish)
        )
        if corrupt {
            try Data(repeating: 7, count: 4_096).write(to: folder.appendingPathComponent("ggml-base.bin"))
        }
        var settings = ServerSettings()
        settings.modelDirectory = folder
        settings.whisperModel = .base
        let warnings = Locked<[String]>([])
        let chosen = try ProviderFactory.recognizer(settings, warn: { line in warnings.withLock { $0.append(line) } })
        #expect(chosen.recognizer.languages == ["en"])
        #expect(chosen.summary.name == "whisper.cpp tiny.en (fallback: Whisper base could not load)")
        let lines = warnings.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("speech-to-text: Whisper base could not load, hearing with tiny.en (English only) instead: ") == true)
        #expect(lines.first?.contains(corrupt ? "could not be loaded" : "is missing") == true, "\(lines)")
    }
}
