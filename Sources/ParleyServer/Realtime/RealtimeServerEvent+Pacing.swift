import ParleyCore

extension RealtimeServerEvent {
    /// Whether a paced transport sends this event in order with the speech (`OutputPacing`):
    /// a response's events and the items it adds do; answers to the client's requests,
    /// errors, and what the user's audio did go at once, ahead of speech still held.
    var followsSpeech: Bool {
        switch self {
        case .responseCreated, .responseDone, .responseOutputItemAdded, .responseOutputItemDone, .responseContentPartAdded,
             .responseContentPartDone, .responseOutputAudioDelta, .responseOutputAudioDone, .responseOutputAudioTranscriptDelta,
             .responseOutputAudioTranscriptDone, .responseOutputTextDelta, .responseOutputTextDone, .responseFunctionCallArgumentsDelta,
             .responseFunctionCallArgumentsDone, .conversationItemAdded, .conversationItemDone, .mcp, .rateLimitsUpdated:
            true
        case .sessionCreated, .sessionUpdated, .conversationCreated, .inputAudioBufferSpeechStarted, .inputAudioBufferSpeechStopped,
             .inputAudioBufferCommitted, .inputAudioBufferCleared, .inputAudioBufferTimeoutTriggered, .inputAudioTranscriptionDelta,
             .inputAudioTranscriptionCompleted, .inputAudioTranscriptionFailed, .conversationItemTruncated, .conversationItemDeleted,
             .conversationItemRetrieved, .outputAudioBufferStarted, .outputAudioBufferStopped, .outputAudioBufferCleared, .error, .parley:
            false
        }
    }
}
