import Testing
@testable import ParleyCore

/// Runs an interruption policy over 20 ms frames and returns every decision but `.none`, with
/// the end time of the frame that made it. Speech that ended is judged by `words` (when
/// given, heard with `clearestWordConfidence`); speech that reached the backchannel length and
/// goes on, by `wordsSoFar`.
///
/// Pattern characters: `.` probability 0, `~` probability 0.6, `#` probability 0.9, voiced;
/// `n` probability 0.9 without voicing (noise the VAD takes for speech: a cough, a hiss).
private func decisions(
    _ pattern: String,
    agent: InterruptionPolicy.AgentActivity = .speaking,
    configuration: InterruptionPolicy.Configuration = .init(),
    holdsPlaybackThreshold: Bool = false,
    agentAt: [Int: InterruptionPolicy.AgentActivity] = [:],
    words: String? = nil,
    clearestWordConfidence: Float? = nil,
    wordsSoFar: String = "Wait, I have a question."
) -> [String] {
    var policy = InterruptionPolicy(configuration: configuration)
    policy.holdsPlaybackThreshold = holdsPlaybackThreshold
    var activity = agent
    var result: [String] = []
    for (index, symbol) in pattern.enumerated() {
        activity = agentAt[index] ?? activity
        let probability: Float = symbol == "#" || symbol == "n" ? 0.9 : symbol == "~" ? 0.6 : 0
        let endMs = (index + 1) * 20
        let action = policy.process(probability: probability, voiced: symbol != "n", agent: activity, at: endMs)
        guard action != .none else { continue }
        result.append("\(endMs) \(action)")
        guard case .judge(let startMs, let speechEndMs) = action else { continue }
        let answer = speechEndMs == endMs ? wordsSoFar : words
        if let answer {
            let decision = policy.judged(
                words: answer, clearestWordConfidence: clearestWordConfidence, speechStartMs: startMs, speechEndMs: speechEndMs
            )
            if decision != .none { result.append("\(endMs) \(decision)") }
        }
    }
    return result
}

private func frames(_ parts: (Character, Int)...) -> String {
    parts.map { String(repeating: $0.0, count: $0.1) }.joined()
}

@Suite struct InterruptionPolicyTests {
    @Test func longSpeechPausesTheAgentThenInterruptsOnceItsWordsAreKnown() {
        // Speech from 200 ms: paused at 160 ms of speech; at 900 ms its words so far are
        // transcribed while it goes on, and words that ask for something interrupt.
        #expect(decisions(frames((".", 10), ("#", 60))) == [
            "360 pause(speechStartMs: 200)",
            "1100 judge(speechStartMs: 200, speechEndMs: 1100)",
            "1100 interrupt(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.longSpeech)",
        ])
        // Long voiced sound in which the recognizer hears no words interrupts too.
        #expect(decisions(frames((".", 10), ("#", 60)), wordsSoFar: "").last?.hasSuffix("longSpeech)") == true)
    }

    @Test func aSlowBackchannelMayGoOnToTwiceTheLength() {
        // A 1.2 s "mm-hmm" (a slow speaker): heard as only a backchannel at 900 ms, it goes
        // on, and is judged whole when it ends.
        let slowHum = frames((".", 10), ("#", 60), (".", 12))
        #expect(decisions(slowHum, words: "Mm-hmm.", wordsSoFar: "Mm-hmm") == [
            "360 pause(speechStartMs: 200)",
            "1100 judge(speechStartMs: 200, speechEndMs: 1100)",
            "1580 judge(speechStartMs: 200, speechEndMs: 1400)",
            "1580 resume(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.backchannel)",
        ])
        // Going on past twice the length, it interrupts without waiting for more words.
        #expect(decisions(frames((".", 10), ("#", 100)), words: "Mm-hmm.", wordsSoFar: "Mm-hmm").last
            == "2000 interrupt(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.longSpeech)")
    }

    @Test func shortSoundsNeitherPauseNorInterrupt() {
        // 140 ms bursts (a cough, a knock) separated by more than the gap tolerance.
        #expect(decisions(frames((".", 10), ("#", 7), (".", 10), ("#", 7), (".", 10))) == [])
    }

    @Test func shortSpeechIsJudgedByItsWords() {
        let speech = frames((".", 10), ("#", 25), (".", 12))
        let judged = "880 judge(speechStartMs: 200, speechEndMs: 700)"
        #expect(decisions(speech, words: "Mm-hmm.") == [
            "360 pause(speechStartMs: 200)", judged,
            "880 resume(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.backchannel)",
        ])
        #expect(decisions(speech, words: "Yeah, okay, right.").last?.hasSuffix("backchannel)") == true)
        #expect(decisions(speech, words: "[BLANK_AUDIO] (coughing)").last?.hasSuffix("noWords)") == true)
        #expect(decisions(speech, words: " Wait.") == [
            "360 pause(speechStartMs: 200)", judged,
            "880 interrupt(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.words)",
        ])
        #expect(decisions(speech, words: "No, I meant Paris.").last?.hasSuffix("words)") == true)
        #expect(decisions(speech, words: "Okay, stop.").last?.hasSuffix("words)") == true)
    }

    @Test func wordsThatAskForNothingLetTheAgentGoOn() {
        // What Whisper tiny.en makes of a short "yeah" ("You have."), or "is it?" said over a
        // speaker: nothing is asked of the agent.
        let speech = frames((".", 10), ("#", 25), (".", 12))
        for words in ["You have.", "You", "Is it?", "Yeah, you have.", "Do you?"] {
            #expect(decisions(speech, words: words).last?.hasSuffix("noRequest)") == true, "\(words)")
        }
        // A word that can start a request among them still interrupts.
        for words in ["No.", "But you have.", "You stop.", "What is it?", "Is it Paris?"] {
            #expect(decisions(speech, words: words).last?.hasSuffix("words)") == true, "\(words)")
        }
    }

    @Test func wordsTheRecognizerWasSureOfNoneOfLetTheAgentGoOn() {
        // Whisper tiny.en's surest word in a "sure" it heard as "Share." (0.50), against the
        // least sure request of the turn corpus, "Stop." (0.72).
        let speech = frames((".", 10), ("#", 25), (".", 12))
        #expect(decisions(speech, words: "Share.", clearestWordConfidence: 0.5).last?.hasSuffix("unclearWords)") == true)
        #expect(decisions(speech, words: "Stop.", clearestWordConfidence: 0.72).last?.hasSuffix("words)") == true)
        // One word heard clearly is enough.
        #expect(decisions(speech, words: "Stop. How did wrong?", clearestWordConfidence: 0.92).last?.hasSuffix("words)") == true)
        // A recognizer that does not say how sure it was, or the rule turned off, goes by the words.
        #expect(decisions(speech, words: "Share.").last?.hasSuffix("words)") == true)
        let off = InterruptionPolicy.Configuration(minimumWordConfidence: 0)
        #expect(decisions(speech, configuration: off, words: "Share.", clearestWordConfidence: 0.5).last?.hasSuffix("words)") == true)
        // Backchannels and words that ask for nothing keep their own reasons.
        #expect(decisions(speech, words: "Okay.", clearestWordConfidence: 0.1).last?.hasSuffix("backchannel)") == true)
        #expect(decisions(speech, words: "You have.", clearestWordConfidence: 0.37).last?.hasSuffix("noRequest)") == true)
    }

    @Test func wordsOfAnEarlierPartOfTheSpeechAreNotTakenForTheWhole() {
        // "No, … stop": judged at its first pause, then it goes on and pauses again; the words of
        // the first part arrive late and are not the verdict on the whole.
        var policy = InterruptionPolicy()
        var judges: [InterruptionPolicy.Action] = []
        for (index, symbol) in frames((".", 10), ("#", 15), (".", 10), ("#", 15), (".", 10)).enumerated() {
            let action = policy.process(probability: symbol == "#" ? 0.9 : 0, voiced: true, agent: .speaking, at: (index + 1) * 20)
            if case .judge = action { judges.append(action) }
        }
        #expect(judges == [.judge(speechStartMs: 200, speechEndMs: 500), .judge(speechStartMs: 200, speechEndMs: 1000)])
        #expect(policy.judged(words: "", speechStartMs: 200, speechEndMs: 500) == .none)
        #expect(policy.judged(words: "No, stop.", speechStartMs: 200, speechEndMs: 1000) == .interrupt(speechStartMs: 200, reason: .words))
    }

    @Test func soundWithoutVoiceNeverPausesTheAgent() {
        // A 300 ms cough or knock: whatever a recognizer would hear in it, it is not judged.
        #expect(decisions(frames((".", 10), ("n", 15), (".", 12)), words: "Thank you.") == [])
    }

    @Test func longSoundWithoutVoiceLetsTheAgentGoOnAndAVoiceAfterItIsHeardAfresh() {
        // 1.2 s of hiss: at 900 ms it is let go (no pause came before); then a voice over the
        // hiss is new speech, paused at 160 ms and interrupting at 900 ms.
        #expect(decisions(frames((".", 10), ("n", 60), ("#", 50))) == [
            "1100 resume(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.noVoice)",
            "1560 pause(speechStartMs: 1400)",
            "2300 judge(speechStartMs: 1400, speechEndMs: 2300)",
            "2300 interrupt(speechStartMs: 1400, reason: ParleyCore.InterruptionPolicy.Reason.longSpeech)",
        ])
        // Hiss that stops is forgotten: speech after it is heard from its own start.
        #expect(decisions(frames((".", 10), ("n", 60), (".", 10), ("#", 10))) == [
            "1100 resume(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.noVoice)",
            "1760 pause(speechStartMs: 1600)",
        ])
    }

    @Test func speechWithTooLittleVoiceResumesWithoutBeingTranscribed() {
        // 40 ms of voice in 500 ms of sound: paused, then let go without asking for its words.
        #expect(decisions(frames((".", 10), ("#", 2), ("n", 23), (".", 12)), words: "Thank you.") == [
            "360 pause(speechStartMs: 200)",
            "880 resume(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.noVoice)",
        ])
        var configuration = InterruptionPolicy.Configuration()
        configuration.minimumVoicedMs = 20
        #expect(decisions(frames((".", 10), ("#", 2), ("n", 23), (".", 12)), configuration: configuration, words: "Stop.").last?
            .hasSuffix("words)") == true)
    }

    @Test func backchannelsAreConfigurable() {
        let speech = frames((".", 10), ("#", 25), (".", 12))
        var configuration = InterruptionPolicy.Configuration()
        configuration.backchannels = ["go on"]
        #expect(decisions(speech, configuration: configuration, words: "Go on.").last?.hasSuffix("backchannel)") == true)
        #expect(decisions(speech, configuration: configuration, words: "Yeah.").last?.hasSuffix("words)") == true)
    }

    @Test func shortGapsDoNotEndTheSpeech() {
        // Two 500 ms stretches 140 ms apart are one speech of 1.14 s: it interrupts at 900 ms
        // (pause, words so far, interruption), and the rest of it is not a second interruption.
        let pattern = frames((".", 10), ("#", 25), (".", 7), ("#", 25), (".", 10))
        #expect(decisions(pattern).count == 3)
        #expect(decisions(pattern).last == "1100 interrupt(speechStartMs: 200, reason: ParleyCore.InterruptionPolicy.Reason.longSpeech)")
    }

    @Test func speechWhileItsWordsAreTranscribedContinuesIt() {
        var policy = InterruptionPolicy()
        var actions: [InterruptionPolicy.Action] = []
        let pattern = frames((".", 10), ("#", 25), (".", 12), ("#", 30))
        for (index, symbol) in pattern.enumerated() {
            let action = policy.process(probability: symbol == "#" ? 0.9 : 0, voiced: true, agent: .speaking, at: (index + 1) * 20)
            if action != .none { actions.append(action) }
        }
        // The verdict on the first part arrives after the speech went on: it no longer applies.
        #expect(policy.judged(words: "mm-hmm", speechStartMs: 200, speechEndMs: 700) == .none)
        #expect(actions == [
            .pause(speechStartMs: 200), .judge(speechStartMs: 200, speechEndMs: 700), .judge(speechStartMs: 200, speechEndMs: 1100),
        ])
        #expect(policy.judged(words: "No, wait.", speechStartMs: 200, speechEndMs: 1100) == .interrupt(speechStartMs: 200, reason: .longSpeech))
    }

    @Test func echoGuardRaisesTheThresholdOnlyWhilePlaying() {
        let pattern = frames((".", 10), ("~", 60))
        #expect(decisions(pattern, agent: .speaking) == [])
        #expect(decisions(pattern, agent: .thinking).count == 3)
        #expect(decisions(pattern, agent: .thinking).last?.contains("longSpeech") == true)
    }

    @Test func speechThatStartedGoesOnAtThePlainThreshold() {
        // 80 ms the VAD is sure of, then 120 ms it is less sure of: one 200 ms word over the
        // playing agent, paused and judged.
        #expect(decisions(frames((".", 10), ("#", 4), ("~", 6), (".", 12))) == [
            "360 pause(speechStartMs: 200)", "580 judge(speechStartMs: 200, speechEndMs: 400)",
        ])
    }

    @Test func withTheSessionCancellingItsEchoSpeechOverThePlayingAgentMustStayAboveThePlaybackThreshold() {
        // What the canceller leaves of the agent's voice: a moment the VAD is sure of, then a
        // long stretch it is less sure of. It never grows into an interruption.
        let residue = frames((".", 10), ("#", 4), ("~", 60), (".", 12))
        #expect(decisions(residue, holdsPlaybackThreshold: true) == [])
        #expect(decisions(residue).contains { $0.contains("longSpeech") })
    }

    @Test func nothingInterruptsAnIdleAgent() {
        #expect(decisions(frames((".", 10), ("#", 60)), agent: .idle) == [])
    }

    @Test func speechBeforeTheAgentStartsDoesNotCount() {
        #expect(decisions(frames(("#", 20), ("#", 60)), agent: .idle, agentAt: [20: .speaking]).first == "560 pause(speechStartMs: 400)")
    }

    @Test func transcriptWordsIgnoreCaseAndSoundLabels() {
        #expect(InterruptionPolicy.words(in: " Uh-huh... *cough* [Music] OK!") == ["uh", "huh", "ok"])
        #expect(InterruptionPolicy.words(in: "(laughs)") == [])
    }

    @Test func resetForgetsSpeechBeingDecided() {
        var policy = InterruptionPolicy()
        for index in 0..<10 { _ = policy.process(probability: 1, voiced: true, agent: .speaking, at: (index + 1) * 20) }
        #expect(policy.isDeciding)
        policy.reset()
        #expect(!policy.isDeciding)
    }
}
