import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// The web client in headless Chromium against a real Parley server (`ParleyApp` on a loopback
/// port, started as the server's own tests start it): runs the Python + Selenium tests in
/// `Tests/Browser` and shuts the server down and starts a new one on the same port when they ask
/// (a line on their stdout, answered on their stdin), so reconnection meets a server that really
/// went away.
///
/// The fake microphone plays syllables of a 500 Hz tone and the server's recognizer answers with the
/// pitch it hears (to 10 Hz), so the user's bubble proves the page captured, resampled and sent the
/// audio intact: a wrong sample rate anywhere on the way changes the number. The page talks over a
/// WebRTC call by default; the hold-to-talk test forced onto the WebSocket (where the page
/// resamples itself) and the WebRTC tests (the browser's Opus, the server's decoding) must both
/// hear exactly 500.
@Suite(.serialized, .enabled(if: BrowserTestTools.available))
struct BrowserTests {
    @Test("hold to talk, typing, hands-free, interruptions, denied microphone, server restart")
    func webClientInHeadlessChromium() async throws {
        try await runBrowserTests()
    }

    private func runBrowserTests() async throws {
        let tools = try BrowserTestTools.locate()
        let scratch = try ScratchDirectory()
        let microphoneSound = scratch.url.appendingPathComponent("tone-syllables.wav")
        try ToneSyllables.wav(hertz: PitchRecognizer.toneHertz, seconds: 1.8).write(to: microphoneSound)

        var server = try TestServer.start(providers: Self.providers())
        let port = server.port
        let run = try await BrowserTestRun.run(
            ["test_web_client"], tools: tools,
            environment: [
                "PARLEY_URL": "http://127.0.0.1:\(port)",
                "PARLEY_SPEECH_WAV": microphoneSound.path,
                "PARLEY_SPEECH_TEXT": String(PitchRecognizer.toneHertz),
                "PARLEY_ARTIFACTS_DIR": tools.packageRoot.appendingPathComponent(".cache/browser-tests").path,
                // No turn model in the test providers: the page asks for semantic_vad, is
                // refused, and ends hands-free turns on silence without troubling the person.
                "PARLEY_HANDS_FREE_TURN_DETECTION": "server_vad",
                "PARLEY_EXPECT_ENGINES": "pitch recognizer,keyword model,scripted voice",
            ],
            within: .seconds(1200),
            stopServer: { await server.stop() },
            startServer: { server = try TestServer.start(providers: Self.providers()) { $0.port = port } }
        )
        await server.stop()
        run.expectPassed()
    }

    /// The deterministic server providers with a recognizer that hears pitch, named as the
    /// page shows them.
    static func providers() -> ProviderSet {
        var providers = TestServer.testProviders()
        providers.recognizer = PitchRecognizer()
        providers.components = [
            ProviderComponent(role: "speech-to-text", name: "pitch recognizer"),
            ProviderComponent(role: "language model", name: "keyword model"),
            ProviderComponent(role: "text-to-speech", name: "scripted voice"),
        ]
        providers.notice = "The keyword model is a tiny demo model."
        return providers
    }
}

/// A recognizer that hears the pitch of the loud part of an utterance and answers with it in
/// hertz, rounded to 10 Hz ("500"); silence gives an empty transcript.
///
/// Each 20 ms frame counts the sign changes from its first sample's predecessor to its last
/// sample, so every crossing is counted once whatever the tone's phase against the frames (a
/// count inside the frame only misses the crossing at its start whenever the phase puts one
/// there — then 500 Hz reads as 475, and one short frame tips the rounding to 450).
/// Only loud frames within one crossing of the median frame's count are averaged: a frame where
/// the browser's fake microphone dropped or zero-filled a stretch under load has fewer crossings
/// and is left out, so glitches in a minority of frames do not move the number. A wrong sample
/// rate anywhere on the way shifts every frame alike (48 kHz read as 44.1 kHz moves 20 crossings
/// to 18.4, 500 Hz to 460), so it still changes the number.
struct PitchRecognizer: SpeechRecognizer {
    static let toneHertz = 500
    let sampleRate = 16_000
    let supportsPartials = false

    func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
        let duration = Double(samples.count) / Double(sampleRate)
        let frame = sampleRate / 50
        let starts = Array(stride(from: 0, to: samples.count - frame + 1, by: frame))
        let levels = starts.map { start in
            (samples[start..<start + frame].reduce(0) { $0 + $1 * $1 } / Float(frame)).squareRoot()
        }
        guard let peak = levels.max(), peak > 0.01 else {
            return Transcription(text: "", audioDuration: duration, processingDuration: 0)
        }
        let crossingsPerFrame = zip(starts, levels).filter { $0.1 > peak / 4 }.map { start, _ in
            (max(start, 1)..<start + frame).count { (samples[$0 - 1] < 0) != (samples[$0] < 0) }
        }
        let median = Double(crossingsPerFrame.sorted()[crossingsPerFrame.count / 2])
        let kept = crossingsPerFrame.filter { abs(Double($0) - median) <= 1 }
        let hertz = Double(kept.reduce(0, +)) / 2 / (Double(kept.count * frame) / Double(sampleRate))
        let rounded = Int((hertz / 10).rounded()) * 10
        return Transcription(text: String(rounded), audioDuration: duration, processingDuration: 0)
    }
}

/// Syllable-like bursts of a pure tone: what the fake microphone plays.
enum ToneSyllables {
    static let sampleRate = 16_000

    /// A 16 kHz pcm16 WAV of `seconds` of a `hertz` tone whose loudness swells four times a second.
    static func wav(hertz: Int, seconds: Double) -> Data {
        let count = Int(seconds * Double(sampleRate))
        let samples = (0..<count).map { index -> Int16 in
            let time = Double(index) / Double(sampleRate)
            let envelope = 0.6 + 0.4 * sin(2 * Double.pi * 4 * time)
            return Int16(12_000 * envelope * sin(2 * Double.pi * Double(hertz) * time))
        }
        return WAVFile.pcm16Data(samples: samples, format: AudioFormat(sampleRate: sampleRate))
    }
}

