import Foundation

// Committed turns on their way to final transcripts (`TranscriptionQueue`), and the partial
// transcripts of the turn in progress (`PartialTranscripts`).
extension VoiceSession {
    /// Makes `samples` the user's turn `itemID`: announces it and queues it for its final
    /// transcript (or takes the early transcription, and its result, that heard the turn).
    func commit(
        samples: [Float], itemID: String, createsResponse: Bool, preemptive: Task<Transcription, any Error>? = nil, finished: Transcription? = nil
    ) {
        speechItemID = nil
        partials.drop()
        let previous = ledger.lastItemID
        ledger.reserve(id: itemID)
        emit(.inputCommitted(itemID: itemID, previousItemID: previous))
        transcriptions.add(TranscriptionQueue.Utterance(
            itemID: itemID, samples: samples, committedAt: clock.now, createsResponse: createsResponse, preemptive: preemptive,
            finished: finished
        ))
        transcribeNext()
    }

    /// Carries out what the transcription queue asks for until it waits for a transcript.
    private func transcribeNext() {
        while let action = transcriptions.next() {
            switch action {
            case .transcribe(let utterance):
                startTranscribing(utterance)
            case .takeTranscript(let utterance, let transcription):
                // The turn was transcribed (and answered) during its silence window.
                transcriptionFinished(utterance, result: .success(transcription))
            case .startResponse(let waiting, let committedAt):
                startResponse(
                    id: waiting.id, trigger: committedAt, transcriptionMs: clock.millisecondsSince(committedAt),
                    recognizedSeconds: nil, request: waiting.request
                )
            }
        }
    }

    /// Transcribes `utterance` in a task of the session (or awaits its early transcription).
    private func startTranscribing(_ utterance: TranscriptionQueue.Utterance) {
        let recognizer = providers.recognizer
        let hints = configuration.recognizerHints
        tasks.start { [weak self] in
            let result: Result<Transcription, any Error>
            do {
                if let preemptive = utterance.preemptive {
                    result = .success(try await withTaskCancellationHandler { try await preemptive.value } onCancel: { preemptive.cancel() })
                } else {
                    result = .success(try await recognizer.transcribe(utterance.samples, isFinal: true, hints: hints))
                }
            } catch {
                result = .failure(error)
            }
            await self?.transcriptionArrived(utterance, result: result)
        }
    }

    /// A transcription task reported back: the transcript is used, and the queue goes on.
    private func transcriptionArrived(_ utterance: TranscriptionQueue.Utterance, result: Result<Transcription, any Error>) {
        transcriptionFinished(utterance, result: result)
        transcribeNext()
    }

    /// Uses an utterance's final transcript: announces and stores it, and answers it (with the
    /// answer prepared during the silence window when that answered the same words).
    private func transcriptionFinished(_ utterance: TranscriptionQueue.Utterance, result: Result<Transcription, any Error>) {
        transcriptions.finished(utterance)
        guard !isClosed else { return }
        let previousItemID = ledger.previousItemID(before: utterance.itemID)
        // A response started before the turn ended either becomes this turn's response or goes.
        defer { preemptive.dropEndedTurnsAnswer() }
        switch result {
        case .failure(let error):
            if error is CancellationError { return }
            let sessionError = SessionError.provider(error, stage: "transcription")
            emit(.userTranscriptFailed(itemID: utterance.itemID, error: sessionError))
            emit(.error(sessionError))
        case .success(let transcription):
            let text = transcription.text.trimmingCharacters(in: .whitespacesAndNewlines)
            emit(.userTranscriptFinal(itemID: utterance.itemID, text: text, language: transcription.language))
            // A turn that transcribes to nothing (a cough, a false interruption) is no turn.
            guard !text.isEmpty else { return }
            callerLanguage.heard(transcription.language)
            let message = ChatMessage.user(text)
            ledger.upsert(id: utterance.itemID, message: message)
            emit(.itemCompleted(itemID: utterance.itemID, message: message))
            guard utterance.createsResponse else { return }
            let transcriptionMs = clock.millisecondsSince(utterance.committedAt)
            if responses.current == nil, let answer = preemptive.takeAnswer(to: text, after: previousItemID) {
                adopt(answer, trigger: utterance.committedAt, transcriptionMs: transcriptionMs, recognizedSeconds: transcription.audioDuration)
            } else {
                startResponse(
                    trigger: utterance.committedAt, transcriptionMs: transcriptionMs,
                    recognizedSeconds: transcription.audioDuration, request: ResponseRequest()
                )
            }
        }
    }

    /// Starts a pass over the user's audio so far (`utterance` picks the manual buffer or the
    /// turn in progress) for a partial transcript of item `itemID`, when one is due.
    func refreshPartialIfDue(utterance: (InputPipeline) -> [Float], itemID: String?, nowMs: Int? = nil) {
        guard providers.recognizer.supportsPartials, !preemptive.isTranscribing,
              partials.isDue(atMs: nowMs ?? input.manualBufferMs, intervalMs: configuration.partialTranscriptIntervalMs) else { return }
        let samples = utterance(input)
        guard samples.count >= providers.recognizer.sampleRate / 4 else { return }
        let partialItemID = itemID ?? speechItemID ?? IdentifierGenerator.make("item")
        speechItemID = partialItemID
        let recognizer = providers.recognizer
        let hints = configuration.recognizerHints
        partials.started(tasks.start { [weak self] in
            let transcription = try? await recognizer.transcribe(samples, isFinal: false, hints: hints)
            await self?.partialFinished(itemID: partialItemID, text: transcription?.text)
        })
    }

    /// Announces a partial transcript, unless its turn has ended meanwhile.
    private func partialFinished(itemID: String, text: String?) {
        partials.passEnded()
        guard !isClosed, speechItemID == itemID, let text, !text.isEmpty else { return }
        emit(.userTranscriptPartial(itemID: itemID, text: text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }
}
