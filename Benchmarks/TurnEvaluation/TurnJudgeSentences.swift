import Foundation

/// Sentences none of the turn corpus' for the text judge of `semantic_vad`
/// (`LlamaTurnCompletionJudge`): a calibration set its threshold was chosen on, and a held-out
/// set it is judged on. Unfinished ones stop where a person might pause mid-thought, many on
/// words the word rule (`UnfinishedThought`) does not know.
public enum TurnJudgeSentences {
    /// Chose the threshold: complete ones scored 0.078 and up, unfinished ones 0.008 and below.
    public static let calibrationComplete = [
        "Open the garage door.", "What's the time in London?", "How tall is Mount Everest?", "Switch off the radio.",
        "Order more coffee filters.", "I'd like a window seat.", "Cancel my alarm for tomorrow.", "Is the museum free on Sundays?",
        "Show me photos from last summer.", "Thanks, that's perfect.", "Where is the nearest petrol station?", "Read the news headlines.",
        "Turn the lights on.", "Pause the music.", "How old is the Eiffel Tower?",
    ]
    public static let calibrationUnfinished = [
        "I'd like to move my dentist appointment to", "Can you send the report to", "What I'm worried about is",
        "Please add milk and", "My friend told me that", "Is it possible to", "Book a table at the Italian place near",
        "I want the blue one but", "The problem with the heating", "Could you explain why the", "Tomorrow morning I need to",
        "Find the cheapest flight from Berlin", "Let me think, I want", "Set the thermostat to", "When my parents arrive",
    ]

    /// Written before the judge was measured on them, never used to choose anything.
    public static let heldOutComplete = [
        "What's the weather like in Lisbon this weekend?", "Turn on the lights in the bedroom.", "How many kilometres is a marathon?",
        "Can you add bread to my shopping list?", "What time does the supermarket close tonight?", "Tell me a joke.",
        "Who wrote Pride and Prejudice?", "Set a timer for ten minutes.", "Is it going to snow in Denver on Friday?", "Call my brother.",
        "What's on my calendar tomorrow morning?", "How do you say thank you in Japanese?", "Play the latest episode of my podcast.",
        "I need a taxi to the airport at five.", "Why is the sky blue?", "Book me a haircut for Saturday afternoon.",
        "What's the score of the Lakers game?", "Remind me to water the plants.", "How much does a flight to Rome cost in June?",
        "That's all for now, thanks.",
    ]
    public static let heldOutUnfinished = [
        "Can you tell me the opening hours of", "I want to order a pizza with", "Remind me to pick up the kids at",
        "What's the fastest way to get from the hotel to", "I need you to send an email to", "Could you play something by",
        "My sister is coming over and she wants", "Find me a cheap hotel in", "The meeting on Thursday has been moved because",
        "How long would it take to cook a", "I was hoping that you could", "Let's schedule a call with the team for",
        "Is there a pharmacy near", "So what I'm trying to say is that", "Could you turn down the", "Buy tickets for the concert on",
        "I'd like to know whether the", "Text my wife that I'll be home by", "Which of these two restaurants has",
        "We should probably leave before", "Actually, my appointment with the doctor", "What I'd really love is",
        "I think I'm going to need", "Could you look up the train times and", "The restaurant we went to last week",
    ]
}
