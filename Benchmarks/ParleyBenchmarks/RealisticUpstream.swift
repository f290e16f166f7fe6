import ParleyCore

/// A fake upstream (`FakeUpstream`) that answers as slowly as a real hosted stack, with each
/// delay taken from a published figure, and with a reply of several sentences spoken at a
/// person's pace: what the defaults a user gets are measured against.
struct RealisticUpstream: Sendable {
    /// How figure names say the upstream.
    var name: String
    /// What every transcription returns.
    var transcript: String
    /// What every chat completion streams, a word per token.
    var reply: String
    var transcriptionMs: Int
    var firstTokenMs: Int
    /// The reply's words per second after the first (`FakeUpstream` streams a word per token).
    var wordsPerSecond: Int
    var speechFirstByteMs: Int
    /// Audio per word of the text a speech request asks for.
    var speechMsPerWord: Int

    /// A hosted stack with GPT-4.1 mini as its language model, each figure a published median or
    /// the slow end of a published range:
    ///
    /// - Transcription 700 ms: no published figure for OpenAI's transcription of a short clip was
    ///   found; AssemblyAI documents 100–700 ms for its synchronous API on utterances under 15 s
    ///   (https://docs.assemblyai.com/overview/processing-times), and this is the top of that range.
    /// - First token 930 ms and 77.2 tokens/s: OpenAI's GPT-4.1 mini as Artificial Analysis
    ///   measures it (https://artificialanalysis.ai/models/gpt-4-1-mini/providers, the median of
    ///   its default workload of 10k input tokens, longer than a voice agent's prompt, so a slow
    ///   first token). At about 4/3 tokens a word (OpenAI: a token is about ¾ of a word,
    ///   https://help.openai.com/en/articles/4936856) that is 58 words a second.
    /// - Speech first byte 500 ms: OpenAI tts-1 streamed, 200–500 ms to the first byte as a user
    ///   measured it (https://community.openai.com/t/streaming-from-text-to-speech-api/493784/25);
    ///   the top of that range. No provider publishes one.
    /// - Speech 400 ms a word: 150 words a minute, a usual conversational pace (an assumption,
    ///   not a measured voice).
    static let hostedGPT41Mini = RealisticUpstream(
        name: "hosted-stack upstream (GPT-4.1 mini's published rates, a 3-sentence reply spoken at 150 words/min)",
        transcript: DefaultsQuestion.text,
        reply: "It is sunny and mild in Paris today, with a high of twenty-two degrees. "
            + "A light breeze will pick up from the west this afternoon, so a thin jacket is a good idea. "
            + "Rain is not expected until late on Saturday evening.",
        transcriptionMs: 700, firstTokenMs: 930, wordsPerSecond: 58, speechFirstByteMs: 500, speechMsPerWord: 400
    )

    /// `FakeUpstream`'s options for it.
    var arguments: [String] {
        [
            "--transcript", transcript, "--reply", reply,
            "--transcription-ms", "\(transcriptionMs)", "--first-token-ms", "\(firstTokenMs)",
            "--tokens-per-second", "\(wordsPerSecond)", "--speech-first-byte-ms", "\(speechFirstByteMs)",
            "--speech-ms-per-word", "\(speechMsPerWord)",
        ]
    }

    /// The upstream's own path from a turn's audio to the reply's first audio byte, when nothing
    /// waits on anything else: the transcription, the first token, the tokens until the server's
    /// `SentenceSegmenter` releases the reply's first chunk, and that chunk's first audio byte.
    var pathToFirstAudioMs: Int {
        var segmenter = SentenceSegmenter()
        var tokensToFirstChunk = 0
        for (index, word) in reply.split(separator: " ").enumerated() {
            tokensToFirstChunk += 1
            if !segmenter.append(index == 0 ? String(word) : " " + word).isEmpty { break }
        }
        return transcriptionMs + firstTokenMs + (tokensToFirstChunk - 1) * 1_000 / wordsPerSecond + speechFirstByteMs
    }

    /// How long the whole reply plays.
    var replyAudioMs: Int { reply.split(separator: " ").count * speechMsPerWord }
}
