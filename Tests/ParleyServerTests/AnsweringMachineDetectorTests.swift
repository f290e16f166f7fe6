import Foundation
@testable import ParleyServer
import Testing

/// Answering-machine detection as a table: what the callee's first seconds sound like → the verdict.
@Suite struct AnsweringMachineDetectorTests {
    static let rate = 8_000

    static func tone(_ frequency: Double, milliseconds: Int, amplitude: Double = 8_000) -> [Int16] {
        (0..<milliseconds * rate / 1_000).map { Int16(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
    }

    /// "Speech": two tones at once, never one steady frequency.
    static func speech(milliseconds: Int) -> [Int16] {
        (0..<milliseconds * rate / 1_000).map {
            Int16(6_000 * sin(2 * Double.pi * 300 * Double($0) / Double(rate)) + 5_000 * sin(2 * Double.pi * 1_130 * Double($0) / Double(rate)))
        }
    }

    static func silence(milliseconds: Int) -> [Int16] { [Int16](repeating: 0, count: milliseconds * rate / 1_000) }

    /// The first verdict other than `listening`, and when (milliseconds of audio), or `listening` at the end.
    static func verdict(of audio: [Int16]) -> (AnsweringMachineDetector.Verdict, Int) {
        var detector = AnsweringMachineDetector()
        for start in stride(from: 0, to: audio.count, by: 160) {
            let verdict = detector.frame(Array(audio[start..<min(start + 160, audio.count)]), sampleRate: rate)
            if verdict != .listening { return (verdict, (start + 160) / 8) }
        }
        return (.listening, audio.count / 8)
    }

    @Test(arguments: [
        // what was heard, the verdict, by when (ms)
        (silence(milliseconds: 300) + speech(milliseconds: 600) + silence(milliseconds: 2_000), AnsweringMachineDetector.Verdict.human, 1_700),
        (silence(milliseconds: 300) + speech(milliseconds: 3_000) + silence(milliseconds: 1_000), .machine, 2_320),
        // a greeting with short pauses is still one greeting
        (speech(milliseconds: 900) + silence(milliseconds: 400) + speech(milliseconds: 900) + silence(milliseconds: 400) + speech(milliseconds: 900), .machine, 2_020),
        (silence(milliseconds: 6_000), .unknown, 5_000),
    ])
    func theFirstSecondsOfAnAnswerTellWhoAnswered(audio: [Int16], verdict: AnsweringMachineDetector.Verdict, by milliseconds: Int) {
        let (decided, at) = Self.verdict(of: audio)
        #expect(decided == verdict)
        #expect(at == milliseconds)
    }

    @Test(arguments: [
        // what follows the greeting, whether a beep is heard, after how many ms
        (silence(milliseconds: 200) + tone(1_000, milliseconds: 500), true, 360),
        (tone(440, milliseconds: 500), false, 0),  // below the band machines beep in
        (tone(1_400, milliseconds: 100) + silence(milliseconds: 100) + tone(1_400, milliseconds: 100), false, 0),  // too short
        (speech(milliseconds: 1_000), false, 0),
    ])
    func aBeepIsASteadyToneOfATenthOfASecondAndMore(audio: [Int16], beep: Bool, after milliseconds: Int) {
        var detector = AnsweringMachineDetector()
        var heardAt: Int?
        for start in stride(from: 0, to: audio.count, by: 160) where heardAt == nil {
            if detector.beepHeard(Array(audio[start..<min(start + 160, audio.count)]), sampleRate: Self.rate) { heardAt = (start + 160) / 8 }
        }
        #expect((heardAt != nil) == beep)
        if beep { #expect(heardAt == milliseconds) }
    }
}
