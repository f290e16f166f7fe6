#if canImport(SwiftUI)
import AVFoundation
import Foundation
import ParleyClient
import ParleyCore

/// The microphone and speaker of a conversation on AVAudioEngine, with voice processing
/// (echo cancellation) so the agent does not hear itself in hands-free mode.
///
/// Slow work stays off the press path: the audio session, the engine's configuration and its
/// start and stop run on a private serial queue. The engine runs only while capturing or
/// playing, so the microphone indicator goes out when the conversation is idle. Player calls
/// (`play`, `stopPlayback`) come from the main actor, as `ConversationModel` makes them.
///
/// ```swift
/// let model = ConversationModel(server: url, token: tokens.fetch, audio: AVAudioEngineConversationAudio())
/// ```
public final class AVAudioEngineConversationAudio: ConversationAudio, @unchecked Sendable {
    // @unchecked Sendable: `state` is guarded by `lock`; the engine is configured, started and
    // stopped only on `engineQueue`; the player is scheduled and stopped only on the main
    // thread.

    public let playbackEvents: AsyncStream<PlaybackEvent>

    private let playbackContinuation: AsyncStream<PlaybackEvent>.Continuation
    private let engine = AVAudioEngine()
    private let player = AVAudioPlayerNode()
    private let engineQueue = DispatchQueue(label: "parley.audio-engine", qos: .userInitiated)
    private let lock = NSLock()
    private var state = State()

    /// The protocol's audio, as the player takes it: 24 kHz mono Float32.
    private let playerFormat = AVAudioFormat(commonFormat: .pcmFormatFloat32, sampleRate: 24_000, channels: 1, interleaved: false)!

    private struct State {
        var capture: CaptureSink?
        var isConfigured = false
        var voiceProcessing = false
        var engineRunning = false
        /// Bumped by every stop: completions and deferred work of older playback are dropped.
        var generation = 0
        var ledger = PlaybackLedger()
        /// Audio that arrived while the engine was starting.
        var pending: [(buffer: AVAudioPCMBuffer, itemID: String)] = []
        var configurationObserver: (any NSObjectProtocol)?
    }

    /// Creates the audio I/O; nothing starts until the first capture or playback.
    public init() {
        // Unbounded: a handful of events per answer.
        (playbackEvents, playbackContinuation) = AsyncStream.makeStream(of: PlaybackEvent.self, bufferingPolicy: .unbounded)
    }

    deinit {
        if let observer = state.configurationObserver { NotificationCenter.default.removeObserver(observer) }
    }

    // MARK: Microphone

    public func requestMicrophoneAccess() async -> MicrophoneAccess {
        switch AVAudioApplication.shared.recordPermission {
        case .granted: return .granted
        case .denied: return .denied
        case .undetermined:
            let granted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                AVAudioApplication.requestRecordPermission { granted in continuation.resume(returning: granted) }
            }
            return granted ? .granted : .denied
        @unknown default: return .denied
        }
    }

    public func startCapture() async throws -> AsyncThrowingStream<CapturedAudio, any Error> {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<AsyncThrowingStream<CapturedAudio, any Error>, any Error>) in
            engineQueue.async {
                continuation.resume(with: Result { try self.startCaptureOnQueue() })
            }
        }
    }

    public func stopCapture() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            engineQueue.async {
                self.stopCaptureOnQueue()
                continuation.resume()
            }
        }
    }

    private func startCaptureOnQueue() throws -> AsyncThrowingStream<CapturedAudio, any Error> {
        stopCaptureOnQueue()
        #if os(iOS)
        try activateSession()
        #endif
        try configure(voiceProcessing: true)
        let input = engine.inputNode
        // Read only after the session is active: activation can change the hardware rate, and a
        // tap with a stale format raises an Objective-C exception.
        let format = input.outputFormat(forBus: 0)
        guard format.sampleRate > 0, format.channelCount > 0 else {
            throw AudioEngineError(message: "no microphone is available")
        }
        // Bounded: the main actor keeps up; if it stalls for seconds the oldest audio goes,
        // not memory.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: CapturedAudio.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(256)
        )
        guard let sink = CaptureSink(inputFormat: format, continuation: continuation) else {
            throw AudioEngineError(message: "the microphone's format (\(format)) cannot be converted")
        }
        input.installTap(onBus: 0, bufferSize: 2048, format: format) { buffer, _ in
            sink.process(buffer)
        }
        input.isVoiceProcessingInputMuted = false
        do {
            try startEngineOnQueue()
        } catch {
            input.removeTap(onBus: 0)
            throw AudioEngineError(message: "the audio engine would not start: \(error.localizedDescription)")
        }
        lock.withLock { state.capture = sink }
        return stream
    }

    private func stopCaptureOnQueue() {
        let (sink, voiceProcessing) = lock.withLock { () -> (CaptureSink?, Bool) in
            defer { state.capture = nil }
            return (state.capture, state.voiceProcessing)
        }
        guard let sink else { return }
        engine.inputNode.removeTap(onBus: 0)
        if voiceProcessing { engine.inputNode.isVoiceProcessingInputMuted = true }
        sink.finish(throwing: nil)
        stopEngineIfIdleOnQueue()
    }

    // MARK: Speaker

    public func play(_ samples: [Int16], itemID: String) {
        guard !samples.isEmpty,
              let buffer = PCMConverter.buffer(SampleConversion.float(samples), sampleRate: playerFormat.sampleRate) else { return }
        let running = lock.withLock { () -> Bool in
            if !state.engineRunning { state.pending.append((buffer, itemID)) }
            return state.engineRunning
        }
        if running {
            schedule(buffer, itemID: itemID)
            return
        }
        let generation = lock.withLock { state.generation }
        engineQueue.async {
            do {
                try self.configure(voiceProcessing: AVAudioApplication.shared.recordPermission == .granted)
                try self.startEngineOnQueue()
            } catch {
                self.lock.withLock { self.state.pending = [] }
                self.playbackContinuation.yield(.drained)
                return
            }
            DispatchQueue.main.async { self.flushPending(generation: generation) }
        }
    }

    public func stopPlayback() -> PlaybackPosition? {
        let position = lock.withLock { () -> PlaybackPosition? in
            let position = state.ledger.position(playedSamples: playedSamples())
            state.generation += 1
            state.ledger = PlaybackLedger()
            state.pending = []
            return position
        }
        player.stop()
        engineQueue.async { self.stopEngineIfIdleOnQueue() }
        return position
    }

    public var playbackPosition: PlaybackPosition? {
        lock.withLock { state.ledger.position(playedSamples: playedSamples()) }
    }

    /// Main thread: schedules the audio that waited for the engine.
    private func flushPending(generation: Int) {
        let pending = lock.withLock { () -> [(buffer: AVAudioPCMBuffer, itemID: String)] in
            guard state.generation == generation else { return [] }
            defer { state.pending = [] }
            return state.pending
        }
        for (buffer, itemID) in pending { schedule(buffer, itemID: itemID) }
    }

    /// Main thread: queues a buffer on the player and starts it if it was idle.
    private func schedule(_ buffer: AVAudioPCMBuffer, itemID: String) {
        let (generation, startsItem) = lock.withLock { () -> (Int, Bool) in
            let startsItem = state.ledger.isEmpty || state.ledger.lastItemID != itemID
            state.ledger.append(itemID: itemID, sampleCount: Int(buffer.frameLength))
            return (state.generation, startsItem)
        }
        player.scheduleBuffer(buffer, completionCallbackType: .dataPlayedBack) { [weak self] _ in
            self?.bufferPlayed(generation: generation)
        }
        if !player.isPlaying { player.play() }
        if startsItem { playbackContinuation.yield(.started(itemID: itemID)) }
    }

    /// Audio thread: one buffer was heard; the last one ends playback.
    private func bufferPlayed(generation: Int) {
        let drained = lock.withLock { () -> Bool in
            guard state.generation == generation else { return false }
            state.ledger.buffersPlayed += 1
            return state.ledger.buffersPlayed == state.ledger.buffersScheduled
        }
        guard drained else { return }
        DispatchQueue.main.async { self.finishDrained(generation: generation) }
    }

    /// Main thread: everything queued was heard; the player rests until the next answer.
    private func finishDrained(generation: Int) {
        let stillDrained = lock.withLock { () -> Bool in
            guard state.generation == generation, state.ledger.buffersPlayed == state.ledger.buffersScheduled else { return false }
            state.generation += 1
            state.ledger = PlaybackLedger()
            return true
        }
        guard stillDrained else { return }
        player.stop()
        playbackContinuation.yield(.drained)
        engineQueue.async { self.stopEngineIfIdleOnQueue() }
    }

    /// Samples the player has rendered since it last started (call with `lock` held).
    private func playedSamples() -> Int {
        guard let nodeTime = player.lastRenderTime, let playerTime = player.playerTime(forNodeTime: nodeTime) else { return 0 }
        return max(0, Int(playerTime.sampleTime))
    }

    // MARK: Engine (engineQueue)

    #if os(iOS)
    private func activateSession() throws {
        let session = AVAudioSession.sharedInstance()
        if session.category != .playAndRecord || session.mode != .voiceChat {
            try session.setCategory(.playAndRecord, mode: .voiceChat, options: [.defaultToSpeaker])
        }
        try session.setActive(true)
    }
    #endif

    /// Attaches the player once, and turns voice processing on or off while the engine is stopped.
    private func configure(voiceProcessing: Bool) throws {
        let needsChange = lock.withLock { !state.isConfigured || (voiceProcessing && !state.voiceProcessing) }
        guard needsChange else { return }
        if engine.isRunning {
            engine.stop()
            lock.withLock { state.engineRunning = false }
        }
        if voiceProcessing {
            try engine.inputNode.setVoiceProcessingEnabled(true)
            engine.inputNode.isVoiceProcessingInputMuted = true
        }
        let isConfigured = lock.withLock { state.isConfigured }
        if !isConfigured {
            engine.attach(player)
            observeConfigurationChanges()
        }
        engine.connect(player, to: engine.mainMixerNode, format: playerFormat)
        engine.connect(engine.mainMixerNode, to: engine.outputNode, format: nil)
        lock.withLock {
            state.isConfigured = true
            state.voiceProcessing = state.voiceProcessing || voiceProcessing
        }
    }

    private func startEngineOnQueue() throws {
        if !engine.isRunning {
            engine.prepare()
            try engine.start()
        }
        lock.withLock { state.engineRunning = true }
    }

    /// Stops the engine when nothing is captured or played, so the microphone turns off.
    private func stopEngineIfIdleOnQueue() {
        let idle = lock.withLock { () -> Bool in
            guard state.capture == nil, state.ledger.isEmpty, state.pending.isEmpty, state.engineRunning else { return false }
            state.engineRunning = false
            return true
        }
        if idle { engine.stop() }
    }

    private func observeConfigurationChanges() {
        let observer = NotificationCenter.default.addObserver(
            forName: .AVAudioEngineConfigurationChange, object: engine, queue: nil
        ) { [weak self] _ in
            guard let self else { return }
            self.engineQueue.async { self.engineConfigurationChanged() }
        }
        lock.withLock { state.configurationObserver = observer }
    }

    /// The route changed (headphones, a call): the engine stopped. Capture fails so listening
    /// drops; playback ends.
    private func engineConfigurationChanged() {
        // Our own reconfiguration (voice processing turned on) can post the notice too; by the
        // time it is handled here the engine runs again. A real change leaves it stopped.
        guard !engine.isRunning else { return }
        let (sink, wasPlaying) = lock.withLock { () -> (CaptureSink?, Bool) in
            defer {
                state.capture = nil
                state.engineRunning = false
                state.generation += 1
                state.ledger = PlaybackLedger()
                state.pending = []
            }
            return (state.capture, !state.ledger.isEmpty)
        }
        if let sink {
            engine.inputNode.removeTap(onBus: 0)
            sink.finish(throwing: AudioEngineError(message: "the audio route changed"))
        }
        if wasPlaying {
            DispatchQueue.main.async {
                self.player.stop()
                self.playbackContinuation.yield(.drained)
            }
        }
    }
}

/// What has been queued on the player since it last started, to tell which item is playing
/// and how much of it was heard.
struct PlaybackLedger {
    private struct Segment {
        var itemID: String
        var start: Int
        var count: Int
    }

    private var segments: [Segment] = []
    private var itemStarts: [String: Int] = [:]
    private var scheduledSamples = 0
    var buffersScheduled = 0
    var buffersPlayed = 0

    var isEmpty: Bool { segments.isEmpty }
    var lastItemID: String? { segments.last?.itemID }

    mutating func append(itemID: String, sampleCount: Int) {
        if itemStarts[itemID] == nil { itemStarts[itemID] = scheduledSamples }
        segments.append(Segment(itemID: itemID, start: scheduledSamples, count: sampleCount))
        scheduledSamples += sampleCount
        buffersScheduled += 1
    }

    /// The item playing once `playedSamples` were rendered, with how much of it was heard.
    func position(playedSamples: Int) -> PlaybackPosition? {
        guard !segments.isEmpty else { return nil }
        let played = min(playedSamples, scheduledSamples)
        let segment = segments.last { $0.start <= played } ?? segments[0]
        let itemStart = itemStarts[segment.itemID] ?? segment.start
        return PlaybackPosition(itemID: segment.itemID, playedMilliseconds: max(0, played - itemStart) / 24)
    }
}

/// Turns the tap's buffers into protocol frames with their level.
final class CaptureSink: @unchecked Sendable {
    // @unchecked Sendable: `converter`, `meter` and `continuation` are guarded by `lock`.
    private let lock = NSLock()
    private let converter: PCMConverter
    private var meter = LevelMeter(sampleRate: 24_000)
    private var continuation: AsyncThrowingStream<CapturedAudio, any Error>.Continuation?

    init?(inputFormat: AVAudioFormat, continuation: AsyncThrowingStream<CapturedAudio, any Error>.Continuation) {
        guard let output = AVAudioFormat(commonFormat: .pcmFormatFloat32, sampleRate: 24_000, channels: 1, interleaved: false),
              let converter = PCMConverter(from: inputFormat, to: output) else { return nil }
        self.converter = converter
        self.continuation = continuation
    }

    /// Tap thread: converts and delivers one buffer.
    func process(_ buffer: AVAudioPCMBuffer) {
        lock.withLock {
            guard let continuation else { return }
            do {
                let samples = PCMConverter.floatSamples(of: try converter.convert(buffer))
                guard !samples.isEmpty else { return }
                let level = meter.process(samples).level
                continuation.yield(CapturedAudio(samples: SampleConversion.pcm16(samples), level: level))
            } catch {
                continuation.finish(throwing: error)
                self.continuation = nil
            }
        }
    }

    /// Ends the capture stream, with `error` when capture failed.
    func finish(throwing error: (any Error)?) {
        lock.withLock {
            continuation?.finish(throwing: error)
            continuation = nil
        }
    }
}

/// A failure of the audio engine, in words for the person.
struct AudioEngineError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
#endif
