import Foundation

/// Tells whether a frame of cancelled input is no louder than what the echo canceller usually
/// leaves of the session's own voice: such a frame is the agent hearing itself, not the user.
///
/// An adaptive echo canceller needs a second or two of the agent's speech to learn the echo
/// path; until then most of the echo comes through, and the VAD takes it for speech. The gate
/// learns faster and from levels alone: for every frame while the agent's audio plays, the
/// ratio of the input's level after cancellation to the loudest output of the echo path's
/// length before it (`echoPathMs`). The median of the last `historyMs` of such ratios is the
/// level the canceller's residue usually has (it drops as the canceller converges); a frame
/// counts as the user only when it stands `marginDB` above it. With nothing playing, nothing
/// is gated. Until `warmUpMs` of playback were measured, every playing frame counts as echo.
///
/// ```swift
/// var gate = EchoResidueGate(frameMs: 32)
/// let isEcho = gate.isEcho(inputLevel: LevelMeter.rms(cancelled), playedLevel: LevelMeter.rms(reference))
/// ```
public struct EchoResidueGate: Sendable {
    /// The longest echo path followed: the output this long before a frame may echo in it.
    public static let echoPathMs = 250
    /// How much of the past the residue's usual level is taken from.
    public static let historyMs = 3_000
    /// Playback measured before the gate trusts its estimate.
    public static let warmUpMs = 256
    /// How far above the usual residue the user must be (12 dB).
    public static let marginDB: Float = 12
    /// Output quieter than this RMS (about −60 dBFS) plays nothing that could echo.
    public static let silentLevel: Float = 0.001

    private let pathFrames: Int
    private let historyFrames: Int
    private let warmUpFrames: Int
    private var playedLevels: [Float] = []
    private var ratios: [Float] = []

    /// A gate for frames of `frameMs` milliseconds.
    public init(frameMs: Int) {
        let frameMs = max(1, frameMs)
        pathFrames = max(1, (Self.echoPathMs + frameMs - 1) / frameMs + 1)
        historyFrames = max(1, Self.historyMs / frameMs)
        warmUpFrames = max(1, (Self.warmUpMs + frameMs - 1) / frameMs)
    }

    /// Whether a frame whose cancelled input has RMS `inputLevel` is echo, the output played
    /// over it having RMS `playedLevel`.
    public mutating func isEcho(inputLevel: Float, playedLevel: Float) -> Bool {
        playedLevels.append(playedLevel)
        if playedLevels.count > pathFrames { playedLevels.removeFirst(playedLevels.count - pathFrames) }
        let echoing = playedLevels.max() ?? 0
        guard echoing >= Self.silentLevel else { return false }
        ratios.append(inputLevel / echoing)
        if ratios.count > historyFrames { ratios.removeFirst(ratios.count - historyFrames) }
        guard ratios.count > warmUpFrames else { return true }
        let usual = ratios.sorted()[ratios.count / 2]
        return inputLevel < usual * echoing * pow(10, Self.marginDB / 20)
    }
}
