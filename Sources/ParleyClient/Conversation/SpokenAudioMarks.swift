/// Where each chunk of an agent item's speech starts, with how much of the item's text had
/// arrived by then: turns "the listener heard 2.3 s" into "the listener heard these words".
struct SpokenAudioMarks: Sendable {
    private struct Mark: Sendable {
        var startSample: Int
        var textLength: Int
    }

    /// Samples per millisecond of the protocol's 24 kHz audio.
    static let samplesPerMillisecond = 24

    private var marks: [Mark] = []
    private(set) var totalSamples = 0

    /// Records a chunk of `sampleCount` samples that arrived when the text was `textLength`
    /// characters long.
    mutating func record(sampleCount: Int, textLength: Int) {
        marks.append(Mark(startSample: totalSamples, textLength: textLength))
        totalSamples += sampleCount
    }

    /// How many characters of the text had been spoken once `milliseconds` of audio played:
    /// the text that had arrived with the last chunk that started playing.
    func heardTextLength(playedMilliseconds milliseconds: Int) -> Int {
        let played = milliseconds * Self.samplesPerMillisecond
        var length = 0
        for mark in marks {
            guard mark.startSample < played else { break }
            length = mark.textLength
        }
        return length
    }

    /// The number of samples in base64 pcm16 text, without decoding it.
    static func sampleCount(ofBase64 text: String) -> Int {
        let utf8 = text.utf8
        let padding = utf8.reversed().prefix(2).prefix { $0 == UInt8(ascii: "=") }.count
        let bytes = utf8.count / 4 * 3 - padding
        return max(0, bytes) / 2
    }
}
