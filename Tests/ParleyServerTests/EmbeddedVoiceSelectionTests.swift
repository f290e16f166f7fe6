import Foundation
import ParleyCore
import ParleyLocal
import ParleyServer
import ParleySync
import Testing

/// The embedded voice: Piper by default, flite on request, flite with a warning and a status
/// component that says so when the Piper voice cannot load.
@Suite struct EmbeddedVoiceSelectionTests {
    @Test func piperIsTheDefaultAndFliteIsChosenByName() throws {
        #expect(ServerSettings.load(environment: [:]).0.embeddedVoice == .piper)
        #expect(ServerSettings.load(environment: ["PARLEY_TTS": "piper"]).0.embeddedVoice == .piper)
        let (flite, problems) = ServerSettings.load(environment: ["PARLEY_TTS": "Flite"])
        #expect(flite.embeddedVoice == .flite && flite.speechSynthesis == .embedded && problems.isEmpty)
        #expect(ServerSettings.load(environment: ["PARLEY_TTS": "espeak"]).problems
            == ["PARLEY_TTS: \"espeak\" is not a provider (use piper, flite, openai)"])
    }

    @Test func theDefaultSpeaksWithPiperAndFliteOnRequest() throws {
        let piper = try ProviderFactory.synthesizer(ServerSettings(), warn: { Issue.record("warned: \($0)") })
        #expect(piper.summary.name == "Piper en_US-joe-medium" && piper.synthesizer.sampleRate == 22_050)
        var settings = ServerSettings()
        settings.embeddedVoice = .flite
        let flite = try ProviderFactory.synthesizer(settings, warn: { Issue.record("warned: \($0)") })
        #expect(flite.summary.name == "flite cmu_us_slt" && flite.synthesizer.sampleRate == 16_000)
    }

    @Test(arguments: [false, true]) func aMissingOrCorruptVoiceFallsBackToFlite(corrupt: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("voice-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        if corrupt {
            let real = try ModelLocator().path(of: .piperJoe)
            try Data(repeating: 7, count: 4_096).write(to: folder.appendingPathComponent("en_US-joe-medium.onnx"))
            try FileManager.default.copyItem(atPath: real + ".json", toPath: folder.appendingPathComponent("en_US-joe-medium.onnx.json").path)
        }
        var settings = ServerSettings()
        settings.modelDirectory = folder
        let warnings = Locked<[String]>([])
        let chosen = try ProviderFactory.synthesizer(settings, warn: { line in warnings.withLock { $0.append(line) } })
        #expect(chosen.synthesizer.sampleRate == 16_000)
        #expect(chosen.summary.name == "flite cmu_us_slt (fallback: the Piper voice could not load)")
        let lines = warnings.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("text-to-speech: the Piper voice could not load, speaking with flite instead: ") == true)
        #expect(lines.first?.contains(corrupt ? "could not be loaded; it may be corrupt" : "is missing") == true, "\(lines)")
    }
}
