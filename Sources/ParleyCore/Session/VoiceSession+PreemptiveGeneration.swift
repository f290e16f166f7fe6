import Foundation

// The work done on a turn while its silence window still runs: its early transcription and the
// answer to it, held back until the turn ends (`PreemptiveGeneration` decides what stays).
extension VoiceSession {
    /// Starts the turn's transcription once its silence is long enough, or drops one the
    /// user talked over (with the response started on it).
    func followSilence(atMs nowMs: Int) {
        // Speech over the agent is not a turn until it is judged to interrupt.
        guard !interruption.isHoldingTurn else { return }
        let recognizer = providers.recognizer
        let hints = configuration.recognizerHints
        let started = preemptive.follow(
            silenceStartedAtMs: input.silenceStartedAtMs, nowMs: nowMs, delayMs: configuration.preemptiveTranscriptionAfterMs,
            turn: { input.turnInProgress },
            transcribe: { samples in tasks.start { try await recognizer.transcribe(samples, isFinal: true, hints: hints) } }
        )
        guard let started else { return }
        // The whole turn is being transcribed: a partial pass still running only competes for the CPU.
        partials.cancel()
        guard mayGeneratePreemptively else { return }
        let generation = preemptive.generation
        tasks.start { [weak self] in
            guard let transcription = try? await started.value else { return }
            await self?.startSpeculativeResponse(answering: transcription, generation: generation)
        }
    }

    /// Whether the session answers turns before their silence window ends (`SpeculativeResponse.isAllowed`).
    var mayGeneratePreemptively: Bool {
        SpeculativeResponse.isAllowed(by: configuration, serverTools: agentProviders.tools)
    }

    /// Whether a response to a turn still in its silence window is being prepared.
    var isAnsweringEarly: Bool { preemptive.answer != nil }

    /// Whether the response prepared during the silence window has said all it will say.
    var earlyAnswerIsComplete: Bool {
        preemptive.answer?.held.contains { held in
            if case .finished = held.event { true } else { false }
        } ?? false
    }

    /// Starts answering the early transcript of a turn still in its silence window, when that
    /// transcription is still the one wanted and nothing else is under way.
    func startSpeculativeResponse(answering transcription: Transcription, generation: Int) {
        let text = transcription.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !isClosed, !text.isEmpty, mayGeneratePreemptively, preemptive.mayAnswer(generation: generation),
              responses.current == nil, transcriptions.isIdle, transcriptions.waitingResponse == nil else { return }
        let responseID = IdentifierGenerator.make("resp")
        let runner = makeRunner(
            responseID: responseID, history: conversationForModel + [.user(text)], request: ResponseRequest(), turnLanguage: transcription.language
        )
        let task = tasks.start { [weak self] in
            await runner.run { [weak self] event in await self?.receiveSpeculative(event, from: responseID) ?? false }
        }
        preemptive.answering(SpeculativeResponse(
            id: responseID, generation: generation, transcription: transcription, transcript: text, lastItemID: ledger.lastItemID, task: task
        ))
    }

    /// Holds an event of a response whose turn has not ended, or passes it on once adopted.
    private func receiveSpeculative(_ event: ResponseRunner.Event, from responseID: String) -> Bool {
        if responses.current?.id == responseID { return receive(event, from: responseID) }
        return preemptive.hold(event, from: responseID, at: clock.now)
    }
}
