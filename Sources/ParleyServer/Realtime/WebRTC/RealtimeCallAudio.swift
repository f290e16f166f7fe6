import Foundation
import ParleyCore
import ParleyRTC

/// A WebRTC call's side of its realtime connection: the peer's Opus in through a jitter
/// buffer (with Opus PLC and FEC for lost packets) to PCM for the session; the session's
/// speech out as Opus, paced by the call; and the WebRTC-only `output_audio_buffer.*` events.
/// Owned by its `RealtimeConnection` and used on its executor only.
final class RealtimeCallAudio {
    /// What one call event means for the connection.
    enum Input {
        /// A client event (JSON text) from the data channel.
        case event(String)
        /// Decoded microphone audio at `inputSampleRate`.
        case audio([Int16])
        /// A server event to send as it is.
        case reply(String)
        /// A client message refused, with the reason to report.
        case refused(String)
        /// The call ended.
        case ended(String)
        case nothing
    }

    /// What the connection does after a session event.
    enum Action {
        case send(String)
        /// Cut an assistant item to what the call actually sent.
        case truncate(itemID: String, audioEndMs: Int)
    }

    let call: RTCCall
    /// The rate the peer's Opus is decoded at: the session's native rate, no resampling.
    let inputSampleRate = 24_000
    private let outputSampleRate: Int
    private var jitterBuffer = JitterBuffer(depth: 2)
    private let decoder: OpusVoiceDecoder?
    /// The audio item of each response still speaking.
    private var audioItems: [String: String] = [:]
    /// Whether the full input buffer was reported since it last emptied: the track keeps
    /// sending (silence, between hold-to-talk turns), and one error says it all.
    private var reportedFullBuffer = false

    init(call: RTCCall, outputSampleRate: Int) {
        self.call = call
        self.outputSampleRate = outputSampleRate
        decoder = try? OpusVoiceDecoder(sampleRate: inputSampleRate)
    }

    /// Interprets one call event.
    func input(_ event: RTCCallEvent) -> Input {
        switch event {
        case .connected, .channelOpened:
            return .nothing
        case .message(let text):
            if AppendEventScanner.scan(text) != nil {
                return .refused("input_audio_buffer.append is not used on a WebRTC call: the audio comes on the call's audio track.")
            }
            return .event(text)
        case .refusedMessage(let reason):
            return .refused("The data channel message was refused: \(reason).")
        case .audio(let sequenceNumber, let payload):
            guard let decoder else { return .nothing }
            var samples: [Int16] = []
            for output in jitterBuffer.insert(sequenceNumber: sequenceNumber, payload: payload) {
                switch output {
                case .packet(let packet): samples += decoder.decode(packet)
                case .lost(let next): samples += decoder.conceal(samples: inputSampleRate / 50, next: next)
                }
            }
            return samples.isEmpty ? .nothing : .audio(samples)
        case .outputStarted(let responseID):
            return .reply(Self.bufferEvent("output_audio_buffer.started", responseID: responseID))
        case .outputStopped(let responseID):
            return .reply(Self.bufferEvent("output_audio_buffer.stopped", responseID: responseID))
        case .ended(let reason):
            return .ended(reason)
        }
    }

    /// Whether an error appending the track's audio is worth reporting (once per full buffer).
    func reports(_ error: SessionError) -> Bool {
        guard error.code == "input_audio_buffer_full" else { return true }
        defer { reportedFullBuffer = true }
        return !reportedFullBuffer
    }

    /// Carries a session event to the call: speech to the track, held while the session
    /// weighs speech over it, and what to cut and say when the outgoing audio is stopped (a
    /// cancelled response, or the user talking over it).
    func observe(_ event: VoiceSessionEvent, interruptsOnSpeech: Bool) -> [Action] {
        switch event {
        case .agentAudio(let responseID, let itemID, let samples):
            audioItems[responseID] = itemID
            call.enqueueAudio(samples, sampleRate: outputSampleRate, responseID: responseID, itemID: itemID)
        case .responseDone(let responseID, let status, _, _):
            guard let itemID = audioItems.removeValue(forKey: responseID) else { return [] }
            if status == .cancelled { return clear() }
            call.flushAudio(responseID: responseID, itemID: itemID)
        case .speechStarted:
            if interruptsOnSpeech { return clear() }
        case .outputAudioPaused:
            call.pauseAudio()
        case .outputAudioResumed:
            call.resumeAudio()
        case .inputCommitted, .inputCleared:
            reportedFullBuffer = false
        default:
            break
        }
        return []
    }

    /// Stops the outgoing audio at once (`output_audio_buffer.clear`, or an interruption).
    func clear() -> [Action] {
        guard let sent = call.clearAudio() else { return [] }
        return [
            .truncate(itemID: sent.itemID, audioEndMs: sent.sentMilliseconds),
            .send(Self.bufferEvent("output_audio_buffer.cleared", responseID: sent.responseID)),
        ]
    }

    /// `{"type":…,"event_id":…,"response_id":…}`.
    static func bufferEvent(_ type: String, responseID: String) -> String {
        let object: [String: String] = ["type": type, "event_id": RealtimeID.event(), "response_id": responseID]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
