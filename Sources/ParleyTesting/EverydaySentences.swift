import Foundation

/// Ten everyday assistant requests: the sentences speech round trips (synthesis, then Whisper)
/// are measured on, in the tests and the benchmarks.
public enum EverydaySentences {
    /// The sentences, each a short spoken request.
    public static let all = [
        "The weather is lovely today.",
        "Please turn off the kitchen lights.",
        "What time does the train leave tomorrow morning?",
        "I would like a cup of coffee with milk.",
        "Remind me to call my mother this evening.",
        "The quick brown fox jumps over the lazy dog.",
        "Can you play some relaxing music?",
        "Send a message to my brother saying I am running late.",
        "How far is it from here to the airport?",
        "Please add bread and butter to my shopping list.",
    ]
}
