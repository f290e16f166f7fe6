import Testing
@testable import ParleyCore

/// Feeds `text` in one piece and returns every chunk, flush included.
private func segment(_ text: String, configuration: SentenceSegmenter.Configuration = .init()) -> [String] {
    var segmenter = SentenceSegmenter(configuration: configuration)
    return segmenter.append(text) + segmenter.flush()
}

/// Configuration that never splits at commas or word limits, to test sentence ends alone.
private let sentencesOnly = SentenceSegmenter.Configuration(
    firstClauseWords: 1_000, firstPhraseWords: 1_000, firstChunkMaximumWords: 1_000, clauseWords: 1_000, maximumWords: 1_000)

@Suite struct SentenceSegmenterTests {
    @Test(arguments: [
        ("Hello there. How are you? I'm fine! Great…", ["Hello there.", "How are you?", "I'm fine!", "Great…"]),
        ("Dr. Smith arrived. He was late.", ["Dr. Smith arrived.", "He was late."]),
        ("Bring fruit, e.g. Apples or pears. Thanks.", ["Bring fruit, e.g. Apples or pears.", "Thanks."]),
        ("She moved to the U.S. in 1999. Then she left.", ["She moved to the U.S. in 1999.", "Then she left."]),
        ("Pi is about 3.14 and e is 2.72. Nice.", ["Pi is about 3.14 and e is 2.72.", "Nice."]),
        ("Meet me at 7:30. Don't be late.", ["Meet me at 7:30.", "Don't be late."]),
        ("See https://example.com/a.b?x=1. Then log in.", ["See https://example.com/a.b?x=1.", "Then log in."]),
        ("Mail ann.lee@example.org today. Thanks!", ["Mail ann.lee@example.org today.", "Thanks!"]),
        ("I was thinking... maybe later. Okay.", ["I was thinking... maybe later.", "Okay."]),
        ("Wait… what was that? Nothing.", ["Wait… what was that?", "Nothing."]),
        ("Well... I never. Really?!", ["Well...", "I never.", "Really?!"]),
        ("He said \"Stop.\" Then he left.", ["He said \"Stop.\"", "Then he left."]),
        ("He said \"Stop.\" \"Go.\"", ["He said \"Stop.\"", "\"Go.\""]),
        ("(This is an aside.) Back to it.", ["(This is an aside.)", "Back to it."]),
        ("John F. Kennedy spoke. Crowds cheered.", ["John F. Kennedy spoke.", "Crowds cheered."]),
        ("It starts at 9 a.m. tomorrow. Be there.", ["It starts at 9 a.m. tomorrow.", "Be there."]),
        ("Steps:\n1. Open the lid.\n2. Pour.", ["Steps:", "1. Open the lid.", "2. Pour."]),
        ("It was built in 1889. It is tall.", ["It was built in 1889.", "It is tall."]),
        ("No trailing mark", ["No trailing mark"]),
        ("  \n\n ", []),
        ("", []),
    ])
    func english(text: String, expected: [String]) {
        #expect(segment(text, configuration: sentencesOnly) == expected)
    }

    @Test(arguments: [
        // German: abbreviations, ordinals, nouns in capitals.
        ("Das ist z.B. Berlin. Am 3. Oktober feiern wir. Prof. Weber kommt usw. Danke.",
         ["Das ist z.B. Berlin.", "Am 3. Oktober feiern wir.", "Prof. Weber kommt usw.", "Danke."]),
        // French: guillemets and titles.
        ("M. Dupont est là. Il dit « bonjour. » Mme. Roy répond.",
         ["M. Dupont est là.", "Il dit « bonjour. »", "Mme. Roy répond."]),
        // Spanish: inverted marks.
        ("¿Cómo estás? ¡Muy bien! La Sra. García llegó.", ["¿Cómo estás?", "¡Muy bien!", "La Sra. García llegó."]),
        // Russian: Cyrillic case and a lower-case abbreviation.
        ("Привет. Как дела? Это, т.е. всё.", ["Привет.", "Как дела?", "Это, т.е. всё."]),
        // Chinese and Japanese: no spaces after full stops.
        ("你好。今天天气很好！你呢？", ["你好。", "今天天气很好！", "你呢？"]),
        ("こんにちは。「元気です。」ありがとう！", ["こんにちは。", "「元気です。」", "ありがとう！"]),
        // Hindi danda and Arabic question mark.
        ("नमस्ते। आप कैसे हैं?", ["नमस्ते।", "आप कैसे हैं?"]),
        ("مرحبا؟ أنا بخير.", ["مرحبا؟", "أنا بخير."]),
    ])
    func otherLanguages(text: String, expected: [String]) {
        #expect(segment(text, configuration: sentencesOnly) == expected)
    }

    @Test func firstLongClauseIsCutAtACommaSoAudioStartsEarly() {
        let text = "When you get to the station tomorrow, turn left at the bakery, and then walk on "
            + "past the old church, the park, the school and the library, until you reach the river. Done."
        #expect(segment(text) == [
            "When you get to the station tomorrow,",
            "turn left at the bakery, and then walk on past the old church,",
            "the park, the school and the library, until you reach the river.",
            "Done.",
        ])
    }

    @Test func shortClausesAreNotCutAfterTheFirstChunk() {
        #expect(segment("Yes, I think so, really. Fine, thanks.") == ["Yes,", "I think so, really.", "Fine, thanks."])
        #expect(segment("Sure. It costs 1,000,000 dollars in total for the whole thing here. Ok.")
            == ["Sure.", "It costs 1,000,000 dollars in total for the whole thing here.", "Ok."])
    }

    @Test func aLongFirstSentenceIsCutBeforeAPhraseSoAudioStartsEarly() {
        #expect(segment("The distance between Earth and the Moon varies over the month. It is far.")
            == ["The distance between Earth", "and the Moon varies over the month.", "It is far."])
        // Not before a phrase opener inside the first four words, nor inside a longer word.
        #expect(segment("It is in Paris and it is lovely. Yes.") == ["It is in Paris", "and it is lovely.", "Yes."])
        #expect(segment("The capital of France is Paris. Yes.") == ["The capital of France is Paris.", "Yes."])
        #expect(segment("Four words here andromeda galaxy shines. Yes.") == ["Four words here andromeda galaxy shines.", "Yes."])
    }

    @Test func aFirstSentenceWithoutPhrasesIsCutAtTheFirstChunkLimit() {
        let words = (1...12).map { "w\($0)" }
        #expect(segment(words.joined(separator: " ") + ".") == [words[0..<8].joined(separator: " "), words[8...].joined(separator: " ") + "."])
        let configuration = SentenceSegmenter.Configuration(firstPhraseWords: 100, firstChunkMaximumWords: 100)
        #expect(segment("The distance between Earth and the Moon varies.", configuration: configuration)
            == ["The distance between Earth and the Moon varies."])
    }

    @Test func aPhraseOpenerIsJudgedOnlyOnceItsWordIsComplete() {
        var segmenter = SentenceSegmenter()
        #expect(segmenter.append("One two three four an") == [])
        #expect(segmenter.append("d") == [])
        #expect(segmenter.append(" five") == ["One two three four"])
        #expect(segmenter.flush() == ["and five"])
    }

    @Test func runOnTextIsCutAtTheWordLimit() {
        let words = (1...25).map { "w\($0)" }
        let configuration = SentenceSegmenter.Configuration(
            firstClauseWords: 100, firstPhraseWords: 100, firstChunkMaximumWords: 100, clauseWords: 100, maximumWords: 10)
        #expect(segment(words.joined(separator: " "), configuration: configuration) == [
            words[0..<10].joined(separator: " "), words[10..<20].joined(separator: " "), words[20...].joined(separator: " "),
        ])
    }

    @Test func longCJKClauseIsCutAtAnIdeographicComma() {
        let configuration = SentenceSegmenter.Configuration(firstClauseWords: 4, clauseWords: 4)
        #expect(segment("我们今天去公园，然后去吃饭。", configuration: configuration) == ["我们今天去公园，", "然后去吃饭。"])
    }

    @Test func textWithoutSpacesIsCutAtTheCharacterLimit() {
        let configuration = SentenceSegmenter.Configuration(maximumCharacters: 50)
        let chunks = segment(String(repeating: "x", count: 120), configuration: configuration)
        #expect(chunks.map(\.count) == [50, 50, 20])
        #expect(segment("short words then " + String(repeating: "y", count: 60), configuration: configuration)
            == ["short words then", String(repeating: "y", count: 60).prefix(50).description, "yyyyyyyyyy"])
    }

    @Test func chunksAreReleasedAsSoonAsTheNextCharacterDecides() {
        var segmenter = SentenceSegmenter()
        #expect(segmenter.append("Hello") == [])
        #expect(segmenter.append(" there.") == [])
        #expect(segmenter.append(" ") == [])
        #expect(segmenter.append("How") == ["Hello there."])
        #expect(segmenter.append(" are you? Dr.") == ["How are you?"])
        #expect(segmenter.append(" ") == [])
        #expect(segmenter.append("Who") == [])
        #expect(segmenter.append("。") == [])
        #expect(segmenter.flush() == ["Dr. Who。"])
        #expect(segmenter.flush() == [])
        #expect(segmenter.append("你好。") == [])
        #expect(segmenter.append("再") == ["你好。"])
    }

    @Test func chunkingOfDeltasNeverChangesTheResult() {
        let texts = [
            "Dr. Smith paid $3.50 at 7:30 p.m. in the U.S. yesterday... then left! Did he? Yes. See https://x.io/a.b. End",
            "When you get to the station tomorrow, turn left at the bakery, and walk on past the church. 你好。世界！Okay…",
            "Café ñandú 🎉👩‍👩‍👧 works. Next e\u{301}toile. 1. Item\n2. Item",
        ]
        var generator = SeededGenerator(seed: 99)
        for text in texts {
            let whole = segment(text)
            let characters = Array(text.unicodeScalars)
            for _ in 0..<50 {
                var segmenter = SentenceSegmenter()
                var chunks: [String] = []
                var index = 0
                while index < characters.count {
                    let length = Int.random(in: 1...6, using: &generator)
                    let piece = characters[index..<min(index + length, characters.count)]
                    chunks += segmenter.append(String(String.UnicodeScalarView(piece)))
                    index += length
                }
                chunks += segmenter.flush()
                #expect(chunks == whole)
            }
        }
    }
}
