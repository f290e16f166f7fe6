import Foundation

/// A response started on the early transcript of a turn whose silence window still runs
/// (preemptive generation). What it says is held back: when the turn ends as transcribed it
/// becomes the turn's response and the held events go out at once; when the user speaks
/// again, or the conversation changed meanwhile, it is cancelled and dropped unheard.
struct SpeculativeResponse: Sendable {
    /// An event the runner delivered before the turn ended, with when it did.
    struct HeldEvent: Sendable {
        var event: ResponseRunner.Event
        var at: Duration
    }

    var id: String
    /// The preemptive transcription it answers (`PreemptiveTranscription.generation`).
    var generation: Int
    /// The early transcription it answers, and the user's words in it.
    var transcription: Transcription
    var transcript: String
    /// The conversation's last item when it started.
    var lastItemID: String?
    /// Runs the response; cancelling it stops the model and the synthesizer.
    var task: Task<Void, Never>
    var held: [HeldEvent] = []
    /// Whether its turn has ended and waits for the transcript to be confirmed.
    var turnEnded = false

    /// Whether a response may start before its turn has ended: only automatic responses, and
    /// only for agents without tools, whose calls could act on words the user then continues.
    static func isAllowed(by configuration: VoiceSessionConfiguration, serverTools: ToolRegistry) -> Bool {
        configuration.preemptiveGeneration && configuration.preemptiveTranscriptionAfterMs != nil
            && configuration.turnDetection?.createResponse == true && serverTools.isEmpty && configuration.clientTools.isEmpty
    }
}
