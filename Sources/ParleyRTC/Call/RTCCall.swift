import Foundation

/// One WebRTC call: ICE-lite, DTLS, SRTP and SCTP state for one peer, driven by the
/// `RTCEndpoint`'s event loop, and what its owner (the realtime session) uses: `events`,
/// `send(text:)`, `enqueueAudio` and `clearAudio`.
///
/// `@unchecked Sendable`: the transport state (`remote`, `dtls`, `srtp*`, `sctp`, …) is touched
/// only on the event loop's thread; `outgoing`, `pendingTexts` and `encoder` are guarded by `lock`.
public final class RTCCall: @unchecked Sendable {
    /// The call's id, as `Location: /v1/realtime/calls/{id}` names it.
    public let id: String
    /// The SDP answer to send back.
    public let answer: String
    /// What the call reports, in order; ends after `.ended`.
    public let events: AsyncStream<RTCCallEvent>
    let localUsernameFragment: String
    let localPassword: String
    let offer: SessionOffer
    private let continuation: AsyncStream<RTCCallEvent>.Continuation
    private unowned let endpoint: RTCEndpoint

    // Event loop only.
    var remote: sockaddr_in?
    var dtls: DTLSTransport?
    private var inboundSRTP: SRTPSession?
    private var outboundSRTP: SRTPSession?
    private var sctp: SCTPAssociation?
    private var eventStream: UInt16?
    private(set) var isEnded = false
    private let createdAt: ContinuousClock.Instant
    private var lastReceivedAt: ContinuousClock.Instant
    private var nextFrameAt: ContinuousClock.Instant?
    private var sequenceNumber = UInt16.random(in: 0...UInt16.max)
    private var timestamp = UInt32.random(in: 0...UInt32.max)
    private let ssrc: UInt32
    private var startsTalkspurt = true

    /// Events waiting for the data channel, at most.
    static let maximumPendingTexts = 2_048
    /// Data channel messages a peer may send per second, sustained (a burst may reach `messageBurst`).
    static let messagesPerSecond = 100.0
    static let messageBurst = 400.0
    private var messageAllowance = RTCCall.messageBurst
    private var allowanceUpdatedAt = ContinuousClock.now
    private var refusedSinceLastReport = 0

    // Guarded by `lock`.
    private let lock = NSLock()
    private var outgoing = RTCOutgoingAudio()
    private var pendingTexts: [String] = []
    private var encoder: OpusVoiceEncoder?
    private var encoderRemainder: [Int16] = []

    init(offer: SessionOffer, endpoint: RTCEndpoint, ssrc: UInt32) throws(RTCError) {
        id = "rtc_" + RTCEndpoint.randomToken(length: 22)
        localUsernameFragment = RTCEndpoint.randomToken(length: 8)
        localPassword = RTCEndpoint.randomToken(length: 24)
        self.offer = offer
        self.endpoint = endpoint
        self.ssrc = ssrc
        (events, continuation) = AsyncStream.makeStream(of: RTCCallEvent.self, bufferingPolicy: .bufferingNewest(1_024))
        answer = SessionAnswer(
            iceUsernameFragment: localUsernameFragment, icePassword: localPassword, fingerprint: endpoint.certificate.fingerprint,
            host: endpoint.advertisedHost, port: endpoint.port, audioSSRC: ssrc
        ).text(answering: offer)
        dtls = try DTLSTransport(certificate: endpoint.certificate, expectedFingerprint: offer.fingerprint)
        createdAt = .now
        lastReceivedAt = createdAt
    }

    // MARK: Owner side (any thread)

    /// Sends a JSON event on the `oai-events` data channel (dropped before it is open or after the call ended).
    public func send(text: String) {
        lock.withLock {
            // Events wait for the channel to open or drain; a peer that never reads cannot grow this.
            guard pendingTexts.count < Self.maximumPendingTexts else { return }
            pendingTexts.append(text)
        }
        endpoint.wake()
    }

    /// Queues a response's speech (mono PCM16 at `sampleRate`) to go out as Opus, paced 20 ms.
    public func enqueueAudio(_ samples: [Int16], sampleRate: Int, responseID: String, itemID: String) {
        lock.withLock {
            if encoder?.sampleRate != sampleRate {
                encoder = try? OpusVoiceEncoder(sampleRate: sampleRate)
                encoderRemainder = []
            }
            guard let encoder else { return }
            encoderRemainder += samples
            let frame = encoder.frameSamples
            var start = 0
            while encoderRemainder.count - start >= frame {
                if let packet = encoder.encode(encoderRemainder[start..<start + frame]) {
                    outgoing.append(.init(packet: packet, responseID: responseID, itemID: itemID))
                }
                start += frame
            }
            encoderRemainder.removeFirst(start)
        }
    }

    /// Sends what is left of a response's speech (padded to a whole frame): its speech is
    /// complete, and `outputStopped` follows its last frame.
    public func flushAudio(responseID: String, itemID: String) {
        let padding: (samples: Int, rate: Int)? = lock.withLock {
            guard let rate = encoder?.sampleRate, !encoderRemainder.isEmpty else { return nil }
            return (rate / 50 - encoderRemainder.count, rate)
        }
        if let padding, padding.samples > 0 {
            enqueueAudio([Int16](repeating: 0, count: padding.samples), sampleRate: padding.rate, responseID: responseID, itemID: itemID)
        }
        lock.withLock { outgoing.finish(responseID: responseID) }
        endpoint.wake()
    }

    /// Holds the outgoing audio where it is (the user may be interrupting): nothing more goes
    /// out until `resumeAudio()` or `clearAudio()`.
    public func pauseAudio() {
        lock.withLock { outgoing.pause() }
    }

    /// Sends held audio on from where it was held.
    public func resumeAudio() {
        lock.withLock { outgoing.resume() }
        endpoint.wake()
    }

    /// Stops the outgoing audio at once; what the playing item had sent, if one was playing.
    public func clearAudio() -> RTCSentAudio? {
        lock.withLock {
            encoderRemainder = []
            return outgoing.clear()
        }
    }

    /// Ends the call (the owner is done with it).
    public func close() {
        endpoint.perform { [self] in end(reason: "closed by the server") }
    }

    // MARK: Event loop

    /// A STUN check passed: the peer is at `address`.
    func checked(from address: sockaddr_in) {
        lastReceivedAt = .now
        remote = address
    }

    /// A DTLS record from the peer.
    func receiveDTLS(_ datagram: UnsafeRawBufferPointer) {
        guard let dtls else { return }
        lastReceivedAt = .now
        switch dtls.receive(datagram) {
        case .nothing:
            break
        case .connected(let keys):
            do {
                inboundSRTP = try SRTPSession(key: keys.inbound, inbound: true)
                outboundSRTP = try SRTPSession(key: keys.outbound, inbound: false)
                if offer.dataChannelIndex != nil {
                    sctp = try SCTPAssociation(
                        remotePort: offer.sctpPort,
                        output: { [unowned self] packet in
                            if let datagram = packet.withUnsafeBytes({ self.dtls?.seal($0) }) { endpoint.send(datagram, to: remote) }
                        },
                        onEvent: { [unowned self] event in handle(event) }
                    )
                }
            } catch {
                end(reason: "\(error)")
                return
            }
            continuation.yield(.connected)
        case .data(let data):
            sctp?.input(data)
        case .failed(let reason):
            end(reason: reason)
        }
        flushDTLS()
    }

    /// An SRTP or SRTCP packet from the peer.
    func receiveMedia(_ datagram: UnsafeRawBufferPointer, isControl: Bool) {
        guard let inboundSRTP else { return }
        var packet = Array(datagram)
        if isControl {
            if inboundSRTP.unprotectControl(&packet) { lastReceivedAt = .now }
            return
        }
        guard inboundSRTP.unprotect(&packet), let rtp = RTPPacket(parsing: packet) else { return }
        lastReceivedAt = .now
        guard rtp.payloadType == offer.opusPayloadType else { return }
        continuation.yield(.audio(sequenceNumber: rtp.sequenceNumber, payload: rtp.payload))
    }

    /// Periodic work: DTLS retransmission, pending texts, paced audio, liveness.
    func tick(now: ContinuousClock.Instant) {
        guard !isEnded else { return }
        if dtls?.isConnected != true {
            if now - createdAt > endpoint.settings.setupTimeout {
                end(reason: remote == nil ? "ICE did not complete in time" : "DTLS did not complete in time")
                return
            }
            dtls?.handleTimeout()
            flushDTLS()
        } else if now - lastReceivedAt > endpoint.settings.silenceTimeout {
            end(reason: "no packets from the peer for \(endpoint.settings.silenceTimeout)")
            return
        }
        if let stream = eventStream, let sctp {
            // In order; what the association cannot take now (its send buffer is full) waits.
            let texts: [String] = lock.withLock { pendingTexts }
            var sent = 0
            for text in texts {
                guard sctp.send(text: text, stream: stream) else { break }
                sent += 1
            }
            if sent > 0 { lock.withLock { pendingTexts.removeFirst(sent) } }
        }
        sendDueAudio(now: now)
        flushDTLS()
    }

    /// Ends the call: DTLS close_notify, SCTP abort, `.ended`.
    func end(reason: String) {
        guard !isEnded else { return }
        isEnded = true
        sctp?.close()
        sctp = nil
        dtls?.shutdown()
        flushDTLS()
        continuation.yield(.ended(reason: reason))
        continuation.finish()
        endpoint.forget(self)
    }

    private func sendDueAudio(now: ContinuousClock.Instant) {
        guard let outboundSRTP, remote != nil else { return }
        while true {
            if let due = nextFrameAt, due > now { return }
            let taken: (frame: RTCOutgoingAudio.Frame, starts: String?, stops: String?)?
            let stopped: String?
            (taken, stopped) = lock.withLock {
                if let taken = outgoing.takeFrame() { return (taken, nil) }
                return (nil, outgoing.finishPlaying())
            }
            if let stopped { continuation.yield(.outputStopped(responseID: stopped)) }
            guard let taken else {
                nextFrameAt = nil
                startsTalkspurt = true
                return
            }
            if let stops = taken.stops { continuation.yield(.outputStopped(responseID: stops)) }
            if let starts = taken.starts { continuation.yield(.outputStarted(responseID: starts)) }
            // Pacing: one frame per 20 ms from the first; a loop that fell behind catches up.
            nextFrameAt = (nextFrameAt ?? now) + .milliseconds(20)
            var packet = RTPPacket(
                payloadType: offer.opusPayloadType, sequenceNumber: sequenceNumber, timestamp: timestamp, ssrc: ssrc,
                marker: startsTalkspurt, payload: taken.frame.packet
            ).bytes
            startsTalkspurt = false
            sequenceNumber &+= 1
            timestamp &+= 960 // the RTP clock of Opus is 48 kHz whatever the coded rate
            if outboundSRTP.protect(&packet) { endpoint.send(packet, to: remote) }
        }
    }

    private func handle(_ event: SCTPAssociation.Event) {
        switch event {
        case .channelOpened(let stream, let label):
            if eventStream == nil || label == "oai-events" { eventStream = stream }
            continuation.yield(.channelOpened(label: label))
        case .text(let stream, let text):
            guard stream == eventStream else { return }
            let now = ContinuousClock.now
            let elapsed = Double((now - allowanceUpdatedAt).components.attoseconds) / 1e18 + Double((now - allowanceUpdatedAt).components.seconds)
            allowanceUpdatedAt = now
            messageAllowance = min(Self.messageBurst, messageAllowance + elapsed * Self.messagesPerSecond)
            guard messageAllowance >= 1 else {
                // A flood: refused here, on the loop, so it never crowds the audio out of `events`.
                refusedSinceLastReport += 1
                if refusedSinceLastReport == 1 {
                    continuation.yield(.refusedMessage("more than \(Int(Self.messagesPerSecond)) events per second; events are being dropped"))
                }
                return
            }
            messageAllowance -= 1
            refusedSinceLastReport = 0
            continuation.yield(.message(text))
        case .refused(_, let reason):
            continuation.yield(.refusedMessage(reason))
        }
    }

    private func flushDTLS() {
        while let records = dtls?.takeOutgoing() { endpoint.send(records, to: remote) }
    }
}
