import CSpeexDSP
import Foundation
import ParleyCore

/// Echo cancellation on speexdsp's multi-delay adaptive filter: it learns the path from the
/// session's output to its input (up to `tailMs` long) and subtracts the echo of what played.
///
/// `@unchecked Sendable`: the speexdsp state is only used while holding `lock`.
public final class SpeexEchoCanceller: EchoCanceller, @unchecked Sendable {
    /// The frame length the canceller takes.
    public let frameLength: Int
    /// The length of the pieces speexdsp works on: the longest that divides `frameLength` and
    /// lasts at most 10 ms.
    public let pieceLength: Int
    /// Guards `state` and the buffers.
    private let lock = NSLock()
    private let state: OpaquePointer
    private var near: [Int16]
    private var far: [Int16]
    private var out: [Int16]

    /// Creates a canceller for frames of `frameLength` mono samples at `sampleRate`, for echo
    /// paths up to `tailMs` long.
    public init(frameLength: Int, sampleRate: Int, tailMs: Int = 250) {
        let frameLength = max(frameLength, 1)
        self.frameLength = frameLength
        let longest = max(1, min(frameLength, sampleRate / 100))
        pieceLength = (1...longest).last { frameLength % $0 == 0 } ?? 1
        near = [Int16](repeating: 0, count: frameLength)
        far = near
        out = near
        state = speex_echo_state_init(Int32(pieceLength), Int32(tailMs * sampleRate / 1000))
        var rate = Int32(sampleRate)
        speex_echo_ctl(state, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
    }

    deinit { speex_echo_state_destroy(state) }

    public func cancel(_ frame: inout [Float], played: [Float]) {
        guard frame.count == frameLength, played.count == frameLength else { return }
        lock.withLock {
            for index in 0..<frameLength {
                near[index] = Self.pcm16(frame[index])
                far[index] = Self.pcm16(played[index])
            }
            near.withUnsafeBufferPointer { near in
                far.withUnsafeBufferPointer { far in
                    out.withUnsafeMutableBufferPointer { out in
                        for start in stride(from: 0, to: frameLength, by: pieceLength) {
                            speex_echo_cancellation(state, near.baseAddress! + start, far.baseAddress! + start, out.baseAddress! + start)
                        }
                    }
                }
            }
            for index in 0..<frameLength { frame[index] = Float(out[index]) / 32_768 }
        }
    }

    private static func pcm16(_ sample: Float) -> Int16 {
        Int16(max(-32_768, min(32_767, (sample * 32_768).rounded())))
    }
}
