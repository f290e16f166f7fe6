import Foundation

// Turn taking: the turn detector's actions, the pauses `semantic_vad` asks about
// (`PauseVerdict`), and speech over the agent (`InterruptionJudge`).
extension VoiceSession {
    /// Hands a VAD frame to the interruption policy (while the session may be interrupted) and
    /// to the turn detector.
    func handle(frame: InputPipeline.Frame) {
        if configuration.turnDetection?.interruptResponse == true {
            let decision = input.interruption(frame, activity: responses.agentActivity(atInputMs: frame.endMs))
            carryOut(interruption.respond(to: decision, atMs: frame.endMs), atMs: frame.endMs)
        }
        handle(turnActions: input.detectTurns(frame), atMs: frame.endMs)
    }

    /// Announces turns the detector started or ended, and commits ended ones; while speech
    /// over the agent is being judged, holds them until the verdict.
    func handle(turnActions newActions: [TurnDetector.Action], atMs nowMs: Int) {
        let holding = configuration.turnDetection?.interruptResponse == true
            && (input.isDecidingInterruption || responses.agentActivity(atInputMs: nowMs) != .idle)
        process(turnActions: interruption.admit(newActions, holding: holding, deciding: input.isDecidingInterruption), atMs: nowMs)
    }

    /// Carries out the turn detector's actions: announces turns, commits ended ones, and asks
    /// about pauses; starts partial passes while the user speaks.
    private func process(turnActions: [TurnDetector.Action], atMs nowMs: Int) {
        for action in turnActions {
            switch action {
            case .speechStarted(let startMs):
                let itemID = IdentifierGenerator.make("item")
                speechItemID = itemID
                partials.turnStarted(atMs: nowMs)
                emit(.speechStarted(itemID: itemID, audioStartMs: startMs))
            case .speechStopped(let endMs):
                emit(.speechStopped(itemID: speechItemID ?? IdentifierGenerator.make("item"), audioEndMs: endMs))
            case .commit(let utterance):
                let itemID = speechItemID ?? IdentifierGenerator.make("item")
                // The early transcription heard the whole turn unless speech forced this commit.
                let early = preemptive.turnEnded(reachedMaximumLength: utterance.reachedMaximumLength)
                commit(
                    samples: utterance.samples, itemID: itemID, createsResponse: configuration.turnDetection?.createResponse ?? false,
                    preemptive: early?.transcription, finished: early?.result
                )
            case .idleTimeout(let startMs, let endMs):
                idleTimeoutTriggered(audioStartMs: startMs, audioEndMs: endMs)
            case .judgeCompletion(let samples, let atMs):
                judgeCompletion(of: samples, atMs: atMs, itemID: speechItemID ?? IdentifierGenerator.make("item"))
            }
        }
        // Once the user pauses, the turn's own transcription is about to start (or the turn to
        // end): a partial pass started now would only compete with it for the CPU.
        if let itemID = speechItemID, input.silenceStartedAtMs == nil {
            refreshPartialIfDue(utterance: { $0.turnInProgress }, itemID: itemID, nowMs: nowMs)
        }
    }

    /// Asks the turn-completion model about the pause at `atMs`, off the session's executor
    /// and the concurrency pool; audio goes on being handled meanwhile. Without a model the
    /// pause waits for the check's maximum silence (a session is refused `semantic_vad`
    /// before it gets here).
    private func judgeCompletion(of samples: [Float], atMs: Int, itemID: String) {
        guard let model = providers.turnCompletionModel else { return }
        let rate = input.rate
        let makeResampler = providers.makeInputResampler
        tasks.start { [weak self] in
            guard let probability = await TurnCompletionQueue.completionProbability(
                of: samples, at: rate, by: model, makeResampler: makeResampler
            ) else { return }
            await self?.completionJudged(probability: probability, atMs: atMs, itemID: itemID)
        }
    }

    /// Takes the audio model's verdict and, when the pause's early transcript is under way,
    /// reads the pause's words too (the reply waits for that transcript anyway) before acting
    /// on it (`PauseVerdict`).
    private func completionJudged(probability: Float, atMs: Int, itemID: String) {
        guard !isClosed else { return }
        guard let early = preemptive.runningTranscription else {
            pauseJudged(probability: probability, atMs: atMs, itemID: itemID, words: nil)
            return
        }
        let audioSaysComplete = input.completionWouldEndTurn(probability: probability)
        let judge = providers.turnCompletionJudge
        tasks.start { [weak self] in
            let words = await PauseWords.read(early, audioSaysComplete: audioSaysComplete, judge: judge)
            await self?.pauseJudged(probability: probability, atMs: atMs, itemID: itemID, words: words)
        }
    }

    /// Acts on a pause's verdicts: the audio model's `probability` and, when they were read,
    /// the pause's `words`.
    private func pauseJudged(probability: Float, atMs: Int, itemID: String, words: PauseWords?) {
        guard !isClosed else { return }
        var actions: [TurnDetector.Action] = []
        switch PauseVerdict(audioSaysComplete: input.completionWouldEndTurn(probability: probability), words: words) {
        case .endTurn: actions = input.completionJudged(probability: probability, atMs: atMs)
        case .shortenWait(let lastWordIsSure): input.wordsJudgedComplete(atMs: atMs, lastWordIsSure: lastWordIsSure)
        case .keepWaiting: break
        }
        emit(.turnJudged(itemID: itemID, audioMs: atMs, probability: probability, endsTurn: !actions.isEmpty, transcript: words?.transcript))
        if !actions.isEmpty { handle(turnActions: actions, atMs: input.receivedMs) }
    }

    /// Carries out what the interruption judge decided at input time `nowMs`.
    private func carryOut(_ actions: [InterruptionJudge.Action], atMs nowMs: Int) {
        for action in actions {
            switch action {
            case .pauseOutput(let atMs):
                emit(.outputAudioPaused(audioMs: atMs))
            case .transcribe(let startMs, let endMs):
                transcribeSpeechOverAgent(speechStartMs: startMs, speechEndMs: endMs)
            case .announce(let startMs, let atMs, let interrupts, let reason, let words):
                emit(.interruptionDecided(speechStartMs: startMs, audioMs: atMs, interrupts: interrupts, reason: reason, words: words))
            case .resumeOutput(let atMs):
                emit(.outputAudioResumed(audioMs: atMs))
            case .startTurn(let turnActions):
                process(turnActions: turnActions, atMs: nowMs)
            case .stopAgent(let stoppedAtMs):
                carryOut(responses.stopAgent(atInputMs: stoppedAtMs, ledger: &ledger))
            case .forgetTurn:
                input.dropTurnInProgress()
                speechItemID = nil
                partials.cancel()
                preemptive.cancel()
            }
        }
    }

    /// Transcribes the speech heard over the agent, off the session's executor, and hands the
    /// words to the policy.
    private func transcribeSpeechOverAgent(speechStartMs: Int, speechEndMs: Int) {
        let clip = input.recentAudio(fromMs: speechStartMs - 100, toMs: speechEndMs + 100)
        let recognizer = providers.recognizer
        // The prompt of English backchannels would pull another language's words into English;
        // a clip this short is heard in the caller's language rather than left to detection.
        let language = callerLanguage.current(configured: configuration.transcription.language)
        let hints = CallerLanguage.isEnglishOrUnknown(language)
            ? TranscriptionHints(language: configuration.transcription.language, prompt: InterruptionPolicy.recognitionPrompt)
            : TranscriptionHints(language: language, prompt: configuration.recognizerHints.prompt)
        interruptionTranscription?.cancel()
        interruptionTranscription = tasks.start { [weak self] in
            // A failed transcription heard no words: the agent goes on. A cancelled one (the
            // speech went on and is judged again) says nothing.
            let words = (try? await recognizer.transcribe(clip, isFinal: true, hints: hints))
                ?? Transcription(text: "", audioDuration: 0, processingDuration: 0)
            guard !Task.isCancelled else { return }
            await self?.interruptionJudged(words: words, speechStartMs: speechStartMs, speechEndMs: speechEndMs)
        }
    }

    /// Hands the words heard over the agent to the policy and carries out its decision.
    private func interruptionJudged(words: Transcription, speechStartMs: Int, speechEndMs: Int) {
        interruptionTranscription = nil
        guard !isClosed else { return }
        let decision = input.interruptionJudged(words: words, speechStartMs: speechStartMs, speechEndMs: speechEndMs)
        carryOut(interruption.respond(to: decision, atMs: input.receivedMs, words: words.text), atMs: input.receivedMs)
    }
}
