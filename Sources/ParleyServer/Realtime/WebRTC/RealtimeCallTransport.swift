import ParleyCore
import ParleyRTC
import ParleySync

/// A WebRTC call: events on its `oai-events` data channel; the peer's Opus in through a jitter
/// buffer (with Opus PLC and FEC for lost packets) to PCM for the session; the session's speech
/// out as Opus, paced by the call; and the WebRTC-only `output_audio_buffer.*` events.
final class RealtimeCallTransport: RealtimeTransport {
    let call: RTCCall
    /// The rate the peer's Opus is decoded at: the session's native rate, no resampling.
    private static let inputSampleRate = 24_000
    private let outputSampleRate: Int
    /// The audio item of each response still speaking.
    private let audioItems = Locked<[String: String]>([:])

    /// Carries a session's speech at `outputSampleRate` on `call`.
    init(call: RTCCall, outputSampleRate: Int) {
        self.call = call
        self.outputSampleRate = outputSampleRate
    }

    var sendsAudioEvents: Bool { false }

    func receive(isolation: isolated any Actor, _ handle: (RealtimeTransportInput) async -> Void) async {
        var jitterBuffer = JitterBuffer(depth: 2)
        let decoder = try? OpusVoiceDecoder(sampleRate: Self.inputSampleRate)
        for await event in call.events {
            switch event {
            case .connected, .channelOpened:
                break
            case .message(let text):
                if AppendEventScanner.scan(text) != nil {
                    await handle(.refused("input_audio_buffer.append is not used on a WebRTC call: the audio comes on the call's audio track."))
                } else {
                    await handle(.message(.text(text)))
                }
            case .refusedMessage(let reason):
                await handle(.refused("The data channel message was refused: \(reason)."))
            case .audio(let sequenceNumber, let payload):
                guard let decoder else { break }
                var samples: [Int16] = []
                for output in jitterBuffer.insert(sequenceNumber: sequenceNumber, payload: payload) {
                    switch output {
                    case .packet(let packet): samples += decoder.decode(packet)
                    case .lost(let next): samples += decoder.conceal(samples: Self.inputSampleRate / 50, next: next)
                    }
                }
                if !samples.isEmpty { await handle(.streamedAudio(samples, sampleRate: Self.inputSampleRate)) }
            case .outputStarted(let responseID):
                await handle(.event(.outputAudioBufferStarted(responseID: responseID)))
            case .outputStopped(let responseID):
                await handle(.event(.outputAudioBufferStopped(responseID: responseID)))
            case .ended(let reason):
                await handle(.ended(reason: reason))
            }
        }
    }

    var audioEventMaximumMs: Int? { nil }

    func send(_ message: OutputPacing.Message) throws {
        call.send(text: message.text)
    }

    /// Nothing to drop: the call's audio stops only when asked to (`clearOutput`).
    func dropUndeliveredSpeech() {}

    func close(reason: String) {
        call.close()
    }

    /// Speech goes to the track, held while the session weighs speech over it; a cancelled
    /// response, or the user talking over it, stops the outgoing audio (see `clearOutput`).
    func observe(_ event: VoiceSessionEvent, interruptsOnSpeech: Bool) -> [RealtimeTransportAction] {
        switch event {
        case .agentAudio(let responseID, let itemID, let samples):
            audioItems.withLock { $0[responseID] = itemID }
            call.enqueueAudio(samples, sampleRate: outputSampleRate, responseID: responseID, itemID: itemID)
        case .responseDone(let responseID, let status, _, _):
            guard let itemID = audioItems.withLock({ $0.removeValue(forKey: responseID) }) else { return [] }
            if status == .cancelled { return clearOutput() }
            call.flushAudio(responseID: responseID, itemID: itemID)
        case .speechStarted:
            if interruptsOnSpeech { return clearOutput() }
        case .outputAudioPaused:
            call.pauseAudio()
        case .outputAudioResumed:
            call.resumeAudio()
        default:
            break
        }
        return []
    }

    /// Stops the track's audio at once; the item it was playing is cut to what went out.
    func clearOutput() -> [RealtimeTransportAction] {
        guard let sent = call.clearAudio() else { return [] }
        return [
            .truncate(itemID: sent.itemID, audioEndMs: sent.sentMilliseconds),
            .send(.outputAudioBufferCleared(responseID: sent.responseID)),
        ]
    }
}
