import Foundation

/// Whether the app may use the microphone.
public enum MicrophoneAccess: String, Sendable, Hashable {
    /// The person has not been asked yet.
    case undetermined
    /// Allowed.
    case granted
    /// Refused (or restricted by the device's owner): only the system Settings can change it.
    case denied
}

/// A piece of captured microphone audio: pcm16, 24 kHz mono (the realtime protocol's format),
/// with its level for a voice-reactive UI.
public struct CapturedAudio: Sendable, Hashable {
    /// The samples, 24 kHz mono.
    public var samples: [Int16]
    /// The smoothed loudness, 0…1 (see `LevelMeter`).
    public var level: Float

    /// Creates a captured frame.
    public init(samples: [Int16], level: Float) {
        self.samples = samples
        self.level = level
    }
}

/// How far the speaker got through an agent item's audio.
public struct PlaybackPosition: Sendable, Hashable {
    /// The assistant item whose audio was playing.
    public var itemID: String
    /// Milliseconds of that item's audio the listener heard.
    public var playedMilliseconds: Int

    /// Creates a position.
    public init(itemID: String, playedMilliseconds: Int) {
        self.itemID = itemID
        self.playedMilliseconds = playedMilliseconds
    }
}

/// What the speaker reports as it plays.
public enum PlaybackEvent: Sendable, Hashable {
    /// Sound started coming out for the item.
    case started(itemID: String)
    /// Everything queued has been heard; the speaker is quiet.
    case drained
}

/// The microphone and the speaker of a conversation: `ConversationModel` drives it, the
/// AVAudioEngine implementation in ParleyUI does it for real, `FakeConversationAudio` in tests
/// and previews.
///
/// Audio is pcm16, 24 kHz mono both ways. Implementations are called from the main actor and
/// must return quickly from the non-`async` methods: they run on the press of a button.
public protocol ConversationAudio: AnyObject, Sendable {
    /// The microphone permission, asking the person when it is still undetermined.
    func requestMicrophoneAccess() async -> MicrophoneAccess

    /// Starts the microphone. Frames arrive on the returned stream until `stopCapture()`,
    /// after which the stream delivers what was already captured and finishes; it finishes
    /// by throwing when capture fails (the device went away, the audio session was taken).
    /// - Throws: when the microphone cannot start.
    func startCapture() async throws -> AsyncThrowingStream<CapturedAudio, any Error>

    /// Stops the microphone; the capture stream then finishes. Harmless when not capturing.
    func stopCapture() async

    /// Queues speech of the assistant item `itemID` to play after what is already queued.
    func play(_ samples: [Int16], itemID: String)

    /// Stops playback at once and drops everything queued.
    /// - Returns: where playback stood, or `nil` when nothing was playing.
    func stopPlayback() -> PlaybackPosition?

    /// Where playback stands now, or `nil` when nothing is playing.
    var playbackPosition: PlaybackPosition? { get }

    /// What the speaker reports as it plays; iterated by one consumer.
    var playbackEvents: AsyncStream<PlaybackEvent> { get }
}
