/// Whisper's decoder can fall into a loop, repeating the utterance (or its last words) until it
/// runs out of tokens. These rules bound a decode by the audio's length and drop the loop.
enum WhisperRepetition {
    /// Text tokens allowed per second of audio: speech runs at about 3–4 tokens a second, so
    /// twice the fastest speech still stops a loop early.
    static let tokensPerSecond = 8.0
    /// Tokens allowed on top of the per-second budget, for short commands and punctuation.
    static let extraTokens = 16
    /// The most text tokens whisper.cpp decodes in one 30 s window.
    static let windowTokenLimit = 220

    /// The token budget of one decoding window for `duration` seconds of audio.
    static func tokenLimit(forAudioDuration duration: Double) -> Int {
        let seconds = min(max(0, duration.isFinite ? duration : 0), 30)
        return min(windowTokenLimit, Int((seconds * tokensPerSecond).rounded(.up)) + extraTokens)
    }

    /// The shortest unit whose repetition is dropped from a decode that ended by itself: a
    /// phrase said twice in a row is a loop, "bye bye" or "thank you, thank you" is speech.
    static let shortestRepeatedPhrase = 4

    /// `tokens` without a tail that repeats one unit (at least `shortestUnit` tokens long) at
    /// least twice; one copy of the unit stays.
    ///
    /// Among the periodic tails the longest wins (the shortest unit on a tie), so
    /// `A B C D C D C` becomes `A B C D`.
    static func trimmingRepeatedTail<Token: Equatable>(_ tokens: [Token], shortestUnit: Int = 1) -> [Token] {
        let count = tokens.count
        guard count >= 2 * max(1, shortestUnit) else { return tokens }
        var kept = count
        var longestTail = 0
        for period in max(1, shortestUnit)...(count / 2) {
            var matched = 0
            while matched < count - period && tokens[count - 1 - matched] == tokens[count - 1 - matched - period] {
                matched += 1
            }
            let tail = matched + period
            if matched >= period && tail > longestTail {
                longestTail = tail
                kept = count - tail + period
            }
        }
        return Array(tokens[..<kept])
    }
}
