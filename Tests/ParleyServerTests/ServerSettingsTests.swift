import Testing
@testable import ParleyServer

@Suite struct ServerSettingsTests {
    @Test func preemptiveTranscriptionIsOnByDefaultAndCanBeTunedOrTurnedOff() {
        #expect(ServerSettings.load(environment: [:]).0.preemptiveTranscriptionAfterMs == 30)
        #expect(ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_TRANSCRIPTION_MS": "150"]).0.preemptiveTranscriptionAfterMs == 150)
        #expect(ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_TRANSCRIPTION_MS": "0"]).0.preemptiveTranscriptionAfterMs == nil)
    }

    @Test func preemptiveGenerationIsOnByDefaultAndCanBeTurnedOff() {
        #expect(ServerSettings.load(environment: [:]).0.preemptiveGeneration)
        #expect(ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_GENERATION": "off"]).0.preemptiveGeneration == false)
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_GENERATION": "maybe"])
        #expect(problems == ["PARLEY_PREEMPTIVE_GENERATION: \"maybe\" is not true or false"])
        #expect(settings.preemptiveGeneration)
    }

    @Test func aBadValueIsOneClearProblem() {
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_PREEMPTIVE_TRANSCRIPTION_MS": "soon", "PARLEY_MAX_SESSIONS": "-1"])
        #expect(problems.contains("PARLEY_PREEMPTIVE_TRANSCRIPTION_MS: \"soon\" is not a whole number from 0 to 10000"))
        #expect(problems.contains("PARLEY_MAX_SESSIONS: \"-1\" is not a whole number from 1 to 100000"))
        #expect(settings.preemptiveTranscriptionAfterMs == 30)
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
}
