import Foundation

/// The texts of the turn-taking corpus and which voice says each: the recipes `TurnCorpus`
/// makes clips from. Voices rotate through flite's slt, rms, awb and kal and espeak-ng's
/// American and British English, so no figure rests on one voice.
public enum TurnCorpusScript {
    /// Complete questions (a turn should end right after each).
    public static let completeQuestions = [
        "What time is it in Tokyo right now?",
        "Can you book a table for two at eight tonight?",
        "How long does it take to drive to the airport?",
        "What is the weather going to be like tomorrow?",
        "Could you remind me to call my mother at six?",
        "How many ounces are there in a pound?",
        "Which train goes to the city centre?",
        "What is the capital of Australia?",
        "Can you turn the lights off in the kitchen?",
        "Is the pharmacy on Main Street open on Sundays?",
        "How do I reset my password?",
        "What did I spend on groceries last month?",
        "When does the next bus to Oxford leave?",
        "Can you play some quiet music for me?",
        "What is the exchange rate for euros today?",
        "Where did I park the car this morning?",
        "How much is a return ticket to Madrid?",
        "Please cancel my meeting with David.",
        "Who won the football match last night?",
        "Can you read me my last three messages?",
    ]

    /// Thoughts spoken with a pause in the middle: the part before the pause (which cannot
    /// end a turn) and the rest.
    public static let midThoughtPairs: [(String, String)] = [
        ("I'd like to book a flight to", "Paris on Monday."),
        ("Can you remind me to", "buy milk on the way home?"),
        ("What I really need is", "a hotel near the station."),
        ("Could you tell me how to get to", "the nearest post office?"),
        ("I was wondering if you could", "move my appointment to Friday."),
        ("Set an alarm for", "half past six tomorrow."),
        ("The thing is, my flight to Berlin", "has been cancelled."),
        ("Send a message to Anna saying that", "I will be late."),
        ("I'm looking for a restaurant that", "serves vegetarian food."),
        ("Can you find me a recipe for", "chocolate cake without eggs?"),
        ("My daughter wants to know whether", "the zoo is open today."),
        ("Add eggs, butter and", "two bags of flour to the list."),
        ("How far is it from London to", "Edinburgh by train?"),
        ("I think the best thing would be to", "leave before the traffic starts."),
        ("Please call the dentist and", "ask if they have anything earlier."),
        ("What was the name of the film with", "the talking dog?"),
        ("Could you check if", "my package has been delivered?"),
        ("We need a taxi for four people at", "seven in the evening."),
        ("Turn the heating up in", "the living room, please."),
        ("If it rains tomorrow I want to", "move the picnic to Sunday."),
    ]

    /// The sentences the word error rate is measured on, clean and under noise: the complete
    /// questions and the mid-thought pairs said whole, about 340 words (Whisper tiny.en's
    /// errors on 20 of them moved by several points with any change to the audio).
    public static var wordErrorSentences: [String] {
        completeQuestions + midThoughtPairs.map { "\($0.0) \($0.1)" }
    }

    /// Said while the agent speaks, meaning "go on".
    public static let backchannels = ["Mm-hmm.", "Yeah.", "Okay.", "Right.", "Uh-huh.", "I see.", "Sure.", "Got it."]

    /// Said while the agent speaks, meaning "stop".
    public static let interruptions = [
        "Wait.", "Stop.", "No, I meant Paris.", "Hold on, what about Osaka?", "Actually, make it tomorrow.",
        "No, stop, that is wrong.", "Sorry, can you say that again?", "Wait a second, I have another question.",
    ]

    /// The mid-thought pause of pair `index`: 0.5 to 1.5 s, spread over the range.
    public static func pauseMilliseconds(_ index: Int) -> Int { 500 + (index * 370) % 1_001 }

    /// Every recipe; `slice` keeps the first so many of each kind (quick runs, tests).
    public static func recipes(slice: Int? = nil) -> [TurnClipRecipe] {
        let voices = TurnVoice.rotation
        func voice(_ index: Int) -> TurnVoice { voices[index % voices.count] }
        func first<T>(_ items: [T]) -> ArraySlice<T> { items.prefix(slice ?? items.count) }
        var recipes: [TurnClipRecipe] = []
        for (index, question) in first(completeQuestions).enumerated() {
            recipes.append(TurnClipRecipe(id: String(format: "complete-%02d", index), kind: .completeQuestion,
                                          segments: [.speech(text: question, voice: voice(index))]))
        }
        for (index, pair) in first(midThoughtPairs).enumerated() {
            recipes.append(TurnClipRecipe(id: String(format: "midthought-%02d", index), kind: .midThoughtPause, segments: [
                .speech(text: pair.0, voice: voice(index)), .pause(milliseconds: pauseMilliseconds(index)), .speech(text: pair.1, voice: voice(index)),
            ]))
        }
        for (index, text) in first(backchannels).enumerated() {
            recipes.append(TurnClipRecipe(id: String(format: "backchannel-%02d", index), kind: .backchannel,
                                          segments: [.speech(text: text, voice: voice(index))]))
        }
        for (index, sound) in first([TurnSound.cough, .knock, .door, .cough]).enumerated() {
            recipes.append(TurnClipRecipe(id: String(format: "noise-%02d", index), kind: .shortNoise, segments: [.sound(sound)]))
        }
        for (index, text) in first(interruptions).enumerated() {
            recipes.append(TurnClipRecipe(id: String(format: "interruption-%02d", index), kind: .realInterruption,
                                          segments: [.speech(text: text, voice: voice(index))]))
        }
        for (index, sentence) in first(wordErrorSentences).enumerated() {
            recipes.append(TurnClipRecipe(id: String(format: "clean-%02d", index), kind: .cleanSpeech,
                                          segments: [.pause(milliseconds: 300), .speech(text: sentence, voice: voice(index)), .pause(milliseconds: 300)]))
        }
        for noise in TurnNoise.conditions {
            for (index, sentence) in first(wordErrorSentences).enumerated() {
                recipes.append(TurnClipRecipe(
                    id: String(format: "noisy-%@%d-%02d", noise.kind.rawValue, noise.snrDB, index), kind: .noisySpeech,
                    segments: [.pause(milliseconds: 300), .speech(text: sentence, voice: voice(index)), .pause(milliseconds: 300)], noise: noise
                ))
            }
        }
        recipes.append(TurnClipRecipe(id: "echo-00", kind: .echoLeak, segments: [], echoGainDB: -20))
        return recipes
    }

    /// The complete questions and the mid-thought pairs (with the same pauses) spoken by the
    /// neural Piper voice: a labelled extra beside the corpus, closer to a human voice
    /// than flite and espeak-ng; `slice` keeps the first so many of each.
    public static func neuralVoiceRecipes(slice: Int? = nil) -> [TurnClipRecipe] {
        let questions = completeQuestions.prefix(slice ?? completeQuestions.count).enumerated().map { index, question in
            TurnClipRecipe(id: String(format: "piper-complete-%02d", index), kind: .completeQuestion,
                           segments: [.speech(text: question, voice: .piperJoe)])
        }
        let pauses = midThoughtPairs.prefix(slice ?? midThoughtPairs.count).enumerated().map { index, pair in
            TurnClipRecipe(id: String(format: "piper-midthought-%02d", index), kind: .midThoughtPause, segments: [
                .speech(text: pair.0, voice: .piperJoe), .pause(milliseconds: pauseMilliseconds(index)), .speech(text: pair.1, voice: .piperJoe),
            ])
        }
        return questions + pauses
    }

    /// Long sentences the babble's talkers say over each other, each by its own voice.
    static let babbleTalkers: [(String, TurnVoice)] = [
        ("The committee met on Tuesday to discuss the budget for next year and agreed to postpone the vote until the figures were checked again.", .fliteRMS),
        ("My grandmother used to grow tomatoes and beans in the garden behind the house, and every summer we picked them together.", .fliteAWB),
        ("If you take the second left after the bridge you will see the museum on your right, just past the bakery with the green door.", .espeakUS),
        ("The weather report said that the storm would reach the coast by the evening, so the ferries were cancelled for the rest of the day.", .fliteKAL),
        ("She told me that the new office is much bigger than the old one, but the coffee machine is always broken on Monday mornings.", .espeakGB),
    ]
}
