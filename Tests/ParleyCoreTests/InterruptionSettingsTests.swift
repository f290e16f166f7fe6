import Foundation
import Testing
@testable import ParleyCore

/// Parley's `parley_interruption` session field: read from `session.update` in both dialects,
/// applied over the session's tuning field by field, refused with the field's name when wrong.
@Suite struct InterruptionSettingsTests {
    func settings(_ session: String, dialect: RealtimeDialect = .ga) throws -> RealtimeSessionSettings {
        let json = #"{"type":"session.update","session":"# + session + "}"
        guard case .sessionUpdate(let settings, _) = try RealtimeClientEvent.decode(json, dialect: dialect) else {
            Issue.record("not a session.update")
            return RealtimeSessionSettings()
        }
        return settings
    }

    @Test(arguments: [RealtimeDialect.ga, .beta])
    func theFieldsGivenReplaceTheSessionsTuningAndTheRestStay(dialect: RealtimeDialect) throws {
        let update = try settings(
            #"{"parley_interruption":{"max_backchannel_ms":600,"min_voiced_ms":90,"backchannels":["go on"],"min_word_confidence":0.25}}"#, dialect: dialect
        )
        #expect(update.interruption == InterruptionSettings(maximumBackchannelMs: 600, minimumVoicedMs: 90, backchannels: ["go on"], minimumWordConfidence: 0.25))
        let configuration = update.applied(to: VoiceSessionConfiguration())
        var expected = InterruptionPolicy.Configuration()
        expected.maximumBackchannelMs = 600
        expected.minimumVoicedMs = 90
        expected.backchannels = ["go on"]
        expected.minimumWordConfidence = 0.25
        #expect(configuration.interruption == expected)
        // A later update that does not mention it leaves it as it is.
        #expect(try settings(#"{"instructions":"Be brief."}"#).applied(to: configuration).interruption == expected)
    }

    @Test func badValuesAreRefusedWithTheFieldsName() throws {
        #expect(throws: RealtimeProtocolError.invalidValue("session.parley_interruption.min_speech_ms", "20000 is outside 0…10000.")) {
            try settings(#"{"parley_interruption":{"min_speech_ms":20000}}"#)
        }
        #expect(throws: RealtimeProtocolError.invalidValue("session.parley_interruption.playback_threshold", "1.5 is outside 0…1.")) {
            try settings(#"{"parley_interruption":{"playback_threshold":1.5}}"#)
        }
        #expect(throws: RealtimeProtocolError.invalidValue("session.parley_interruption.min_word_confidence", "-0.1 is outside 0…1.")) {
            try settings(#"{"parley_interruption":{"min_word_confidence":-0.1}}"#)
        }
        #expect(throws: RealtimeProtocolError.invalidValue("session.parley_interruption.max_backchannel_ms", "must be at least min_speech_ms (500).")) {
            try settings(#"{"parley_interruption":{"min_speech_ms":500,"max_backchannel_ms":300}}"#)
        }
        #expect(throws: RealtimeProtocolError.self) { try settings(#"{"parley_interruption":{"backchannels":[1]}}"#) }
        #expect(throws: RealtimeProtocolError.self) { try settings(#"{"parley_interruption":"yes"}"#) }
    }

    @Test func itIsNeverWrittenBack() throws {
        var update = RealtimeSessionSettings(VoiceSessionConfiguration())
        update.interruption = InterruptionSettings(minimumSpeechMs: 200)
        let event = RealtimeServerEvent.sessionUpdated(RealtimeSessionInfo(id: "sess_1", settings: update))
        let text = try #require(event.encode(dialect: .ga))
        #expect(!text.contains("parley_interruption") && !text.contains("min_speech_ms"))
    }

    @Test func anAgentDefinitionUsesTheSameObject() throws {
        let json = #"{"min_speech_ms":200,"max_backchannel_ms":700,"gap_tolerance_ms":100,"threshold":0.4,"playback_threshold":0.9,"backchannels":["yeah"]}"#
        let decoded = try JSONDecoder().decode(InterruptionSettings.self, from: Data(json.utf8))
        #expect(decoded == InterruptionSettings(
            minimumSpeechMs: 200, maximumBackchannelMs: 700, gapToleranceMs: 100, threshold: 0.4, playbackThreshold: 0.9, backchannels: ["yeah"]
        ))
        #expect(decoded.validationProblems().isEmpty)
        #expect(InterruptionSettings(threshold: -1).validationProblems().map(\.field) == ["threshold"])
    }
}
