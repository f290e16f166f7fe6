import Foundation

/// The input side of a voice session: resampling to the recognizer's rate, framing for the
/// VAD, the turn detector, the barge-in policy and the manual (push-to-talk) buffer.
/// Time is input-audio time in milliseconds since the session began.
struct InputPipeline {
    /// One VAD frame with its speech probability.
    struct Frame {
        var samples: [Float]
        var probability: Float
        var startMs: Int
        var endMs: Int
    }

    private var detector: any VoiceActivityDetector
    /// Makes the noise suppressor `noise_reduction` asks for, when the session has one.
    private let makeNoiseSuppressor: (@Sendable (NoiseReduction, Int, Int) -> any NoiseSuppressor)?
    /// The suppressor in use and its kind.
    private var noiseSuppressor: (kind: NoiseReduction, suppressor: any NoiseSuppressor)?
    /// Makes the echo canceller `parley_echo_cancellation` asks for, when the session has one.
    private let makeEchoCanceller: (@Sendable (Int, Int) -> any EchoCanceller)?
    /// The echo canceller in use, with what the session's output played.
    private var echoCanceller: (any EchoCanceller)?
    private var played = PlayedAudioTimeline()
    /// Keeps what the canceller leaves of the agent's voice from counting as speech.
    private var echoGate: EchoResidueGate?
    private var turnDetector: TurnDetector
    private var interruptionPolicy = InterruptionPolicy()
    /// The last few seconds of input, for judging what was said over the agent.
    private var recentAudio = RecentAudio(keepingMs: 3_000)
    private var resampler: (sourceRate: Int, resampler: any Resampler)?
    private var pendingFrameSamples: [Float] = []
    /// Samples at `rate` received since the session began.
    private var receivedSamples = 0
    /// Input time that has arrived, including what the resampler still holds back.
    private var heardThroughMs = 0
    /// Samples of the current source rate received, and the input time before them.
    private var sourceSamples = (rate: 0, count: 0, startMs: 0)
    /// Push-to-talk audio not yet committed.
    private(set) var manualBuffer: [Float] = []
    private var maximumBufferSamples: Int
    /// The rate everything here runs at: the recognizer's (and the VAD's) rate.
    let rate: Int

    init(
        detector: any VoiceActivityDetector, recognizerRate: Int, configuration: VoiceSessionConfiguration,
        makeNoiseSuppressor: (@Sendable (NoiseReduction, Int, Int) -> any NoiseSuppressor)? = nil,
        makeEchoCanceller: (@Sendable (Int, Int) -> any EchoCanceller)? = nil
    ) {
        self.detector = detector
        self.makeNoiseSuppressor = makeNoiseSuppressor
        self.makeEchoCanceller = makeEchoCanceller
        rate = recognizerRate
        turnDetector = TurnDetector(sampleRate: recognizerRate)
        maximumBufferSamples = configuration.maximumInputBufferMs * recognizerRate / 1000
        apply(configuration)
    }

    /// Input audio time received so far.
    var receivedMs: Int { receivedSamples * 1000 / rate }

    /// Milliseconds of push-to-talk audio buffered.
    var manualBufferMs: Int { manualBuffer.count * 1000 / rate }

    /// Where the silence now running in a turn began; nil unless the turn detector is stopping.
    var silenceStartedAtMs: Int? { turnDetector.silenceStartedAtMs }

    /// The audio of the turn the detector is in, prefix included (empty when quiet).
    var turnInProgress: [Float] { turnDetector.utteranceInProgress }

    /// Takes the settings that apply from the next frame.
    mutating func apply(_ configuration: VoiceSessionConfiguration) {
        maximumBufferSamples = configuration.maximumInputBufferMs * rate / 1000
        interruptionPolicy.configuration = configuration.interruption
        if noiseSuppressor?.kind != configuration.noiseReduction {
            if let kind = configuration.noiseReduction, let makeNoiseSuppressor {
                noiseSuppressor = (kind, makeNoiseSuppressor(kind, detector.frameLength, rate))
            } else {
                noiseSuppressor = nil
            }
        }
        if configuration.cancelsEcho != (echoCanceller != nil) {
            echoCanceller = configuration.cancelsEcho ? makeEchoCanceller?(detector.frameLength, rate) : nil
            echoGate = echoCanceller == nil ? nil : EchoResidueGate(frameMs: detector.frameLength * 1000 / rate)
            played = PlayedAudioTimeline()
        }
        interruptionPolicy.holdsPlaybackThreshold = echoCanceller != nil
        guard let vad = configuration.turnDetection else { return }
        turnDetector.configuration.threshold = Float(vad.threshold)
        turnDetector.configuration.prefixPaddingMs = vad.prefixPaddingMs
        turnDetector.configuration.silenceDurationMs = vad.silenceDurationMs
        turnDetector.configuration.idleTimeoutMs = vad.idleTimeoutMs
        turnDetector.configuration.completionCheck = vad.eagerness?.completionCheck
        turnDetector.configuration.maximumUtteranceMs = configuration.maximumUtteranceMs
    }

    /// Converts PCM16 at `sourceRate` to Float samples at `rate`, keeping one streaming
    /// resampler for as long as the source rate stays the same.
    mutating func resample(
        _ samples: [Int16], from sourceRate: Int, using makeResampler: (Int, Int) -> any Resampler
    ) -> [Float] {
        let floats = SampleConversion.float(samples)
        if sourceSamples.rate != sourceRate { sourceSamples = (sourceRate, 0, heardThroughMs) }
        sourceSamples.count += samples.count
        heardThroughMs = sourceSamples.startMs + sourceSamples.count * 1000 / sourceRate
        guard sourceRate != rate else {
            receivedSamples += floats.count
            return floats
        }
        if resampler?.sourceRate != sourceRate {
            resampler = (sourceRate, makeResampler(sourceRate, rate))
        }
        let converted = resampler!.resampler.process(floats)
        receivedSamples += converted.count
        return converted
    }

    /// Whether the session's output is cancelled from the input (so it wants `played(_:)`).
    var cancelsEcho: Bool { echoCanceller != nil }

    /// Records output audio (at the input rate) the client starts playing now, for the echo canceller.
    mutating func played(_ samples: [Float]) {
        played.add(samples, sentAtSample: receivedSamples)
    }

    /// Adds push-to-talk audio; `false` (and nothing added) when the buffer is full.
    mutating func buffer(_ samples: [Float]) -> Bool {
        guard manualBuffer.count + samples.count <= maximumBufferSamples else { return false }
        manualBuffer += samples
        return true
    }

    /// Cuts audio into VAD frames and scores each one.
    mutating func frames(from samples: [Float]) -> [Frame] {
        pendingFrameSamples += samples
        let frameLength = detector.frameLength
        var frames: [Frame] = []
        var start = 0
        let firstSampleIndex = receivedSamples - pendingFrameSamples.count
        while pendingFrameSamples.count - start >= frameLength {
            var frame = Array(pendingFrameSamples[start..<start + frameLength])
            var isEcho = false
            if echoCanceller != nil {
                let reference = played.take(from: firstSampleIndex + start, count: frameLength)
                echoCanceller?.cancel(&frame, played: reference)
                isEcho = echoGate?.isEcho(inputLevel: LevelMeter.rms(frame), playedLevel: LevelMeter.rms(reference)) ?? false
            }
            noiseSuppressor?.suppressor.suppress(&frame)
            let startMs = (firstSampleIndex + start) * 1000 / rate
            let endMs = (firstSampleIndex + start + frameLength) * 1000 / rate
            recentAudio.append(frame, rate: rate, endingAtMs: endMs)
            // The VAD hears every frame (its state follows the audio); the agent's own echo is no speech.
            let probability = detector.speechProbability(of: frame)
            frames.append(Frame(samples: frame, probability: isEcho ? 0 : probability, startMs: startMs, endMs: endMs))
            start += frameLength
        }
        pendingFrameSamples.removeFirst(start)
        return frames
    }

    /// Feeds a frame to the turn detector.
    mutating func detectTurns(_ frame: Frame) -> [TurnDetector.Action] {
        turnDetector.process(probability: frame.probability, frame: frame.samples, at: frame.startMs)
    }

    /// Lets the turn detector end the turn on the audio short of a whole VAD frame, when it is
    /// quiet and completes the silence (the turn then ends up to a frame sooner).
    mutating func detectTurnEndInPartialFrame() -> [TurnDetector.Action] {
        let startMs = (receivedSamples - pendingFrameSamples.count) * 1000 / rate
        // What the resampler holds back is a filter's look-ahead, a millisecond or so; the bound
        // keeps rate switches (each drops a resampler's held-back samples) from adding up.
        let heardThrough = min(heardThroughMs, receivedMs + 5)
        return turnDetector.processPartialFrame(pendingFrameSamples, at: startMs, heardThroughMs: heardThrough)
    }

    /// Whether a verdict of `probability` would end the turn (it is at or above the check's threshold).
    func completionWouldEndTurn(probability: Float) -> Bool {
        turnDetector.configuration.completionCheck.map { probability >= $0.threshold } ?? false
    }

    /// Hands the turn detector the verdict on the pause it asked about at `atMs`.
    mutating func completionJudged(probability: Float, atMs: Int) -> [TurnDetector.Action] {
        turnDetector.completionJudged(probability: probability, atMs: atMs)
    }

    /// Tells the turn detector that the words of the pause judged at `atMs` say the thought is
    /// complete, though the turn did not end there; `lastWordIsSure` says whether the recognizer
    /// was sure of their last word.
    mutating func wordsJudgedComplete(atMs: Int, lastWordIsSure: Bool) {
        turnDetector.wordsJudgedComplete(atMs: atMs, lastWordIsSure: lastWordIsSure)
    }

    /// Starts the idle timer at input time `ms` (the end of the agent's last reply).
    mutating func armIdleTimeout(atMs ms: Int) { turnDetector.armIdleTimeout(at: ms) }

    /// Asks the interruption policy about a frame; its voicing is measured only when the policy
    /// may use it (the frame is speech and the agent busy, or a sound is being followed).
    mutating func interruption(_ frame: Frame, activity: InterruptionPolicy.AgentActivity) -> InterruptionPolicy.Action {
        let policy = interruptionPolicy.configuration
        let mayMatter = (activity != .idle || interruptionPolicy.isFollowingSound)
            && frame.probability >= min(policy.threshold, policy.playbackThreshold)
        let voiced = mayMatter && Voicing.isVoiced(frame.samples, sampleRate: rate)
        return interruptionPolicy.process(probability: frame.probability, voiced: voiced, agent: activity, at: frame.endMs)
    }

    /// Hands the interruption policy the words of the speech it asked to judge.
    mutating func interruptionJudged(words: Transcription, speechStartMs: Int, speechEndMs: Int) -> InterruptionPolicy.Action {
        interruptionPolicy.judged(
            words: words.text, clearestWordConfidence: words.clearestWordConfidence, speechStartMs: speechStartMs, speechEndMs: speechEndMs
        )
    }

    /// Whether speech over the agent is being decided.
    var isDecidingInterruption: Bool { interruptionPolicy.isDeciding }

    /// The input audio from `startMs` to `endMs`, as far as it is still kept.
    func recentAudio(fromMs startMs: Int, toMs endMs: Int) -> [Float] {
        recentAudio.samples(fromMs: startMs, toMs: endMs, rate: rate)
    }

    /// Forgets the turn in progress (speech over the agent that meant nothing).
    mutating func dropTurnInProgress() { turnDetector.dropTurn() }

    /// Takes the push-to-talk buffer.
    mutating func takeManualBuffer() -> [Float] {
        defer { manualBuffer = [] }
        guard noiseSuppressor != nil else { return manualBuffer }
        // Suppressed frame by frame; the last frame is padded with silence, then cut back.
        let frameLength = detector.frameLength
        var cleaned: [Float] = []
        cleaned.reserveCapacity(manualBuffer.count + frameLength)
        for start in stride(from: 0, to: manualBuffer.count, by: frameLength) {
            var frame = Array(manualBuffer[start..<min(start + frameLength, manualBuffer.count)])
            frame += [Float](repeating: 0, count: frameLength - frame.count)
            noiseSuppressor?.suppressor.suppress(&frame)
            cleaned += frame
        }
        return Array(cleaned.prefix(manualBuffer.count))
    }

    /// Takes the audio of the turn in progress and returns the detector to quiet.
    mutating func takeTurnInProgress() -> [Float] {
        defer { turnDetector.reset() }
        return turnDetector.utteranceInProgress
    }

    /// Drops all buffered audio and any turn in progress.
    mutating func clear() {
        manualBuffer = []
        pendingFrameSamples = []
        turnDetector.reset()
        interruptionPolicy.reset()
        detector.reset()
    }
}
