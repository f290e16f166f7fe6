import CLibre
import Foundation
import ParleyCore
import ParleyRTC
import ParleySync

/// One SIP call, taken (an INVITE that came in) or placed (`SIPEndpoint.dial`): its libre session
/// (INVITE, answer, re-INVITE, BYE, CANCEL), its RTP socket and negotiated codec, and what its
/// owner uses: `events`, `answer()`, `reject`, `hangUp()` and the outgoing audio (at the codec's
/// `sampleRate`, encoded and paced one packet per 20 ms). A placed call reports how it goes on
/// `dialProgress` (`SIPCall+Dial`).
///
/// RTP is symmetric: audio goes back to where the caller's comes from, once a packet arrived
/// from the address of its SDP or of its signalling; packets from anywhere else are ignored.
///
/// `@unchecked Sendable`: the libre state (`session`, `rtp`, `sdp`, `media`, `remote`, …) is
/// touched only on the `SIPLoop` thread; `id`, `codec`, `mediaPort` and `takesKeyPresses` are written there before the
/// call is handed to its owner (a placed call's codec before `dialProgress` says `answered`), and only read after;
/// `outgoing`, `ignored` and `transferWaiter` are `Locked`.
public final class SIPCall: @unchecked Sendable {
    /// The SIP Call-ID.
    public internal(set) var id: String
    /// Whether Parley placed the call (else it came in).
    public let isOutbound: Bool
    /// The caller's user part (`From`), usually a phone number.
    public let caller: String
    /// The called user part (the request URI's, else `To`'s), usually a phone number.
    public let called: String
    /// The address the INVITE came from; for a placed call, the host of its trunk (or target).
    public let sourceAddress: String
    /// The INVITE's `From` and `To` header values.
    public let fromHeader: String, toHeader: String
    /// The INVITE's custom `X-` headers, in order (at most `maximumCustomHeaders`, values cut to 512 characters).
    public let customHeaders: [(name: String, value: String)]
    /// The most custom headers kept of an INVITE.
    public static let maximumCustomHeaders = 20
    /// The codec the answer speaks.
    public private(set) var codec = SIPCodec.pcmu
    /// The rate of the call's audio, in and out.
    public var sampleRate: Int { codec.sampleRate }
    /// The local UDP port of the call's RTP.
    public private(set) var mediaPort = 0
    /// Whether the caller takes key presses as RFC 4733 events (it offered `telephone-event`).
    public private(set) var takesKeyPresses = false
    /// What the call reports, in order; ends after `.ended`.
    public let events: AsyncStream<SIPCallEvent>
    private let continuation: AsyncStream<SIPCallEvent>.Continuation
    /// How a placed call goes: `ringing`, then `answered` or `failed`; empty for a call that came in.
    public let dialProgress: AsyncStream<SIPDialProgress>
    let dialContinuation: AsyncStream<SIPDialProgress>.Continuation
    private(set) weak var endpoint: SIPEndpoint?
    let loop = SIPLoop.shared

    // Loop thread only.
    var session: OpaquePointer?
    private var rtp: OpaquePointer?
    var sdp: OpaquePointer?
    private var media: OpaquePointer?
    private var telephoneEvents: OpaquePointer?
    private var telephoneEventPayloadTypes: Set<UInt8> = []
    /// The payload type of the codec, as the caller numbered it.
    private var payloadType: UInt8 = 0
    private var decoder: OpusVoiceDecoder?
    /// A silent packet of the codec, sent while the agent says nothing.
    private var silence: [UInt8] = []
    /// The payload type the caller takes RFC 4733 events in, if it offered them.
    private var outgoingEventPayloadType: UInt8?
    /// Keys waiting to be pressed (`send(keys:)`), as event codes.
    private var pendingKeys: [Int32] = []
    /// The key being pressed and the packets left until the next may start.
    private var pressedKey: (code: Int32, ticksLeft: Int)?
    private var keyTimestamp: UInt32 = 0
    private var remote = sa()
    private var latched = false
    var expectedHosts: Set<String>
    var isAnswered = false
    private(set) var isEnded = false
    private var isHeld = false
    private let timer = UnsafeMutablePointer<tmr>.allocate(capacity: 1)
    private var nextFrameAt: ContinuousClock.Instant?
    private var timestamp = UInt32.random(in: 0...UInt32.max)
    private var marker = true
    private var jitterBuffer = JitterBuffer(depth: 2)
    private var lastPacketSamples = SIPCodec.g711FrameSamples
    private var lastKeyTimestamp: UInt32?

    /// A placed call's ring timeout: given up unanswered when it fires (`SIPCall+Dial`).
    let ringTimer = UnsafeMutablePointer<tmr>.allocate(capacity: 1)
    /// Whether a placed call's callee rang (180 or 183).
    var hasRung = false
    /// Whether `dialProgress` said how the dialling ended.
    var isDialSettled = false
    /// What a placed call answers its trunk's digest challenge with.
    var credentials: (username: String, password: String)?

    /// The REFER of a transfer under way, and who waits for its outcome (`SIPCall+Transfer`).
    var transferSubscription: OpaquePointer?
    let transferWaiter = Locked<CheckedContinuation<TransferOutcome, Never>?>(nil)

    // Guarded by their locks.
    private let outgoing = Locked(Outgoing())
    private let ignored = Locked(0)

    /// RTP packets ignored so far: from an unexpected address, of an unknown payload type, or too large.
    public var ignoredPackets: Int { ignored.withLock { $0 } }

    /// The outgoing queue and the samples short of a whole frame.
    private struct Outgoing {
        var queue = RTCOutgoingAudio()
        var remainder: [Int16] = []
        var encoder: OpusVoiceEncoder?
    }

    /// The largest RTP payload taken: 60 ms of G.711 and then some.
    static let maximumPayload = 1_024

    init(message: UnsafePointer<sip_msg>, endpoint: SIPEndpoint) {
        let msg = message.pointee
        id = msg.callid.text
        caller = msg.from.uri.user.text
        let requestUser = msg.uri.user.text
        called = requestUser.isEmpty ? msg.to.uri.user.text : requestUser
        sourceAddress = msg.src.hostText
        fromHeader = msg.from.val.text
        toHeader = msg.to.val.text
        customHeaders = Self.customHeaders(of: message)
        isOutbound = false
        expectedHosts = [sourceAddress]
        self.endpoint = endpoint
        (events, continuation) = AsyncStream.makeStream(of: SIPCallEvent.self, bufferingPolicy: .bufferingNewest(1_024))
        (dialProgress, dialContinuation) = AsyncStream.makeStream(of: SIPDialProgress.self)
        dialContinuation.finish()
        tmr_init(timer)
        tmr_init(ringTimer)
    }

    /// A call to place as `dial` says; its Call-ID is set once libre made the INVITE.
    init(dialing dial: SIPDial, fromHeader: String, endpoint: SIPEndpoint) {
        id = ""
        isOutbound = true
        caller = dial.caller
        called = dial.targetUser
        sourceAddress = dial.peerHost
        self.fromHeader = fromHeader
        toHeader = "<\(dial.target)>"
        customHeaders = []
        expectedHosts = [sourceAddress]
        self.endpoint = endpoint
        (events, continuation) = AsyncStream.makeStream(of: SIPCallEvent.self, bufferingPolicy: .bufferingNewest(1_024))
        (dialProgress, dialContinuation) = AsyncStream.makeStream(of: SIPDialProgress.self, bufferingPolicy: .unbounded)
        tmr_init(timer)
        tmr_init(ringTimer)
    }

    /// The `X-` headers of `message`, bounded: a caller cannot make the webhook carry more than a few kilobytes.
    private static func customHeaders(of message: UnsafePointer<sip_msg>) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        var element = message.pointee.hdrl.head
        while let current = element, headers.count < maximumCustomHeaders {
            if let header = current.pointee.data?.assumingMemoryBound(to: sip_hdr.self).pointee {
                let name = header.name.text
                if name.count <= 64, name.lowercased().hasPrefix("x-") { headers.append((name, String(header.val.text.prefix(512)))) }
            }
            element = current.pointee.next
        }
        return headers
    }

    deinit {
        timer.deallocate()
        ringTimer.deallocate()
    }

    /// Why an offer cannot be answered.
    enum OfferProblem: Error {
        /// The SDP does not parse (400).
        case malformed
        /// Nothing in it we speak (488).
        case noCommonCodec
        /// No RTP port could be bound (500).
        case noMediaPort
    }

    // MARK: Owner side (any thread)

    /// Answers the call (`200 OK` with the SDP answer) and starts its audio.
    public func answer() {
        loop.perform { [self] in
            guard !isEnded, !isAnswered, let session, let sdp else { return }
            var description: UnsafeMutablePointer<mbuf>?
            guard sdp_encode(&description, sdp, false) == 0 else { return end(reason: "the SDP answer could not be made") }
            defer { _ = mem_deref(description) }
            guard parley_sipsess_answer(session, 200, "OK", description, SIPEndpoint.allowHeader) == 0 else {
                return end(reason: "the answer could not be sent")
            }
            isAnswered = true
            tick()
        }
    }

    /// Refuses the call with a final `status` (before it is answered), and ends it.
    public func reject(status: UInt16, reason: String) {
        loop.perform { [self] in
            guard !isEnded else { return }
            if !isAnswered, let session { _ = parley_sipsess_reject(session, status, reason, "") }
            end(reason: "refused: \(status) \(reason)")
        }
    }

    /// Ends the call from the server's side: BYE once answered, else a refusal.
    public func hangUp() {
        loop.perform { [self] in terminate(reason: "hung up by the server") }
    }

    /// Presses `keys` (`0`–`9`, `*`, `#`, `A`–`D`) as RFC 4733 events, 100 ms each with 100 ms
    /// between them; other characters are skipped. Nothing is sent when the caller did not offer
    /// `telephone-event` (`takesKeyPresses`).
    public func send(keys: String) {
        let codes = keys.uppercased().compactMap { $0.asciiValue }.map { telev_digit2code(Int32($0)) }.filter { $0 >= 0 }
        loop.perform { [self] in pendingKeys += codes }
    }

    /// Queues speech (PCM16 at `sampleRate`) of a response's item, to go out paced 20 ms; on a
    /// placed call, once it is answered (the answer sets the codec).
    public func enqueueAudio(_ samples: [Int16], responseID: String, itemID: String) {
        outgoing.withLock { [codec] outgoing in
            outgoing.remainder += samples
            var start = 0
            while outgoing.remainder.count - start >= codec.frameSamples {
                let frame = outgoing.remainder[start..<start + codec.frameSamples]
                if let packet = Self.encode(frame, codec: codec, encoder: outgoing.encoder) {
                    outgoing.queue.append(.init(packet: packet, responseID: responseID, itemID: itemID))
                }
                start += codec.frameSamples
            }
            outgoing.remainder.removeFirst(start)
        }
    }

    /// One 20 ms frame in `codec`.
    private static func encode(_ frame: ArraySlice<Int16>, codec: SIPCodec, encoder: OpusVoiceEncoder?) -> [UInt8]? {
        if let law = codec.law { return G711.encode(Array(frame), law: law) }
        return encoder?.encode(frame)
    }

    /// Sends the rest of a response's speech (padded to a whole frame): `outputStopped` follows its last frame.
    public func flushAudio(responseID: String, itemID: String) {
        let padding = outgoing.withLock { [codec] in $0.remainder.isEmpty ? 0 : codec.frameSamples - $0.remainder.count }
        if padding > 0 { enqueueAudio([Int16](repeating: 0, count: padding), responseID: responseID, itemID: itemID) }
        outgoing.withLock { $0.queue.finish(responseID: responseID) }
    }

    /// Holds the outgoing audio where it is, until `resumeAudio()` or `clearAudio()`.
    public func pauseAudio() { outgoing.withLock { $0.queue.pause() } }

    /// Sends held audio on.
    public func resumeAudio() { outgoing.withLock { $0.queue.resume() } }

    /// Stops the outgoing audio at once; what the playing item had sent.
    public func clearAudio() -> RTCSentAudio? {
        outgoing.withLock {
            $0.remainder = []
            return $0.queue.clear()
        }
    }

    // MARK: Loop side

    /// Binds the call's RTP socket on `bindAddress` within `ports` and negotiates the INVITE's
    /// offer; the answer is made from it when the call is answered.
    func negotiate(offer message: UnsafePointer<sip_msg>, bindAddress: sa, advertised: sa, ports: ClosedRange<UInt16>) throws(OfferProblem) {
        try openMedia(bindAddress: bindAddress, advertised: advertised, ports: ports)
        try decode(message, isOffer: true)
        prepareCodec()
    }

    /// Binds the call's RTP socket on `bindAddress` within `ports` and describes it (at
    /// `advertised`) with `codecs` and RFC 4733 events.
    func openMedia(bindAddress: sa, advertised: sa, ports: ClosedRange<UInt16>, codecs: [SIPCodec] = SIPCodec.allCases) throws(OfferProblem) {
        var advertised = advertised
        var bindAddress = bindAddress
        guard sdp_session_alloc(&sdp, &advertised) == 0 else { throw .noMediaPort }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard rtp_listen(&rtp, Int32(IPPROTO_UDP), &bindAddress, ports.lowerBound, ports.upperBound, false, sipRTPReceived, nil, context) == 0,
              let rtp else { throw .noMediaPort }
        mediaPort = Int(sa_port(rtp_local(rtp)))
        guard sdp_media_add(&media, sdp, "audio", UInt16(mediaPort), "RTP/AVP") == 0, let media else { throw .noMediaPort }
        for codec in codecs {
            _ = parley_sdp_format_add(media, "\(codec.offeredPayloadType)", codec.rawValue, codec.rtpmap.rate, codec.rtpmap.channels, nil)
        }
        _ = parley_sdp_format_add(media, "\(SIPCodec.telephoneEventPayloadType)", "telephone-event", 8_000, 1, "0-15")
        _ = telev_alloc(&telephoneEvents, 20)
    }

    /// The encoder, decoder and silence of the negotiated codec.
    func prepareCodec() {
        if codec == .opus {
            decoder = try? OpusVoiceDecoder(sampleRate: codec.sampleRate)
            let encoder = try? OpusVoiceEncoder(sampleRate: codec.sampleRate)
            outgoing.withLock { $0.encoder = encoder }
            silence = encoder?.encode([Int16](repeating: 0, count: codec.frameSamples)[...]) ?? []
        } else if let law = codec.law {
            silence = G711.encode([Int16](repeating: 0, count: codec.frameSamples), law: law)
        }
    }

    /// Reads an offer (the INVITE's or a re-INVITE's), or the answer to a placed call's offer: the
    /// codec, the telephone events, where audio goes, hold.
    func decode(_ message: UnsafePointer<sip_msg>, isOffer: Bool) throws(OfferProblem) {
        guard let body = message.pointee.mb, let sdp, let media else { throw .malformed }
        let position = body.pointee.pos
        defer { body.pointee.pos = position }
        guard mbuf_get_left(body) > 0, sdp_decode(sdp, body, isOffer) == 0 else { throw .malformed }
        var offered: [(codec: SIPCodec, payloadType: UInt8)] = []
        var events: [UInt8] = []
        var element = sdp_media_format_lst(media, false)?.pointee.head
        while let current = element {
            if let format = current.pointee.data?.assumingMemoryBound(to: sdp_format.self).pointee, format.sup,
               let name = format.name.map({ String(cString: $0) }) {
                if let codec = SIPCodec.allCases.first(where: { $0.rawValue.caseInsensitiveCompare(name) == .orderedSame }), (0...127).contains(format.pt) {
                    offered.append((codec, UInt8(format.pt)))
                } else if name.lowercased() == "telephone-event", (0...127).contains(format.pt) {
                    events.append(UInt8(format.pt))
                }
            }
            element = current.pointee.next
        }
        // Opus when offered (wideband), else the caller's first G.711; a re-INVITE keeps the codec.
        let preferred = offered.first { $0.codec == .opus } ?? offered.first
        guard let chosen = isAnswered ? offered.first(where: { $0.codec == codec }) : preferred, sdp_media_rport(media) != 0 else {
            throw .noCommonCodec
        }
        codec = chosen.codec
        payloadType = chosen.payloadType
        telephoneEventPayloadTypes = Set(events + [UInt8(SIPCodec.telephoneEventPayloadType)])
        outgoingEventPayloadType = events.first
        takesKeyPresses = !events.isEmpty
        if let address = sdp_media_raddr(media) {
            let host = address.pointee.hostText
            if !latched {
                remote = address.pointee
                if !host.isEmpty, host != "0.0.0.0" { expectedHosts.insert(host) }
            }
        }
        // A caller that stops receiving (sendonly or inactive) holds the call: nothing is sent meanwhile.
        isHeld = (sdp_media_rdir(media).rawValue & SDP_RECVONLY.rawValue) == 0
    }

    /// A re-INVITE (hold, resume, a new address): the answer to its offer, or an offer of ours when it has none.
    func reoffer(_ message: UnsafePointer<sip_msg>, answer: UnsafeMutablePointer<UnsafeMutablePointer<mbuf>?>) -> Int32 {
        guard let sdp else { return EINVAL }
        if let body = message.pointee.mb, mbuf_get_left(body) > 0 {
            do throws(OfferProblem) {
                try decode(message, isOffer: true)
            } catch {
                return EPROTO
            }
            return sdp_encode(answer, sdp, false)
        }
        return sdp_encode(answer, sdp, true)
    }

    /// The answer to an offer of ours: a placed call's, or a re-INVITE's without SDP.
    func answered(_ message: UnsafePointer<sip_msg>) -> Int32 {
        if isOutbound, !isAnswered { return answeredDial(message) }
        guard let body = message.pointee.mb, mbuf_get_left(body) > 0, let sdp else { return 0 }
        let position = body.pointee.pos
        defer { body.pointee.pos = position }
        return sdp_decode(sdp, body, false)
    }

    func established() {
        if isOutbound, !isAnswered { return establishedDial() }
        continuation.yield(.established)
    }

    /// One RTP packet: checked, then audio through the jitter buffer or a key press.
    func received(from source: UnsafePointer<sa>, header: rtp_header, payload body: UnsafeMutablePointer<mbuf>) {
        guard !isEnded else { return }
        if latched {
            guard sa_cmp(source, &remote, Int32(SA_ALL.rawValue)) else { ignored.withLock { $0 += 1 }; return }
        } else {
            guard expectedHosts.contains(source.pointee.hostText) else { ignored.withLock { $0 += 1 }; return }
            remote = source.pointee
            latched = true
        }
        let count = mbuf_get_left(body)
        guard count > 0, count <= Self.maximumPayload else { ignored.withLock { $0 += 1 }; return }
        if telephoneEventPayloadTypes.contains(header.pt) {
            var event: Int32 = 0
            var isEnd = false
            guard telev_recv(telephoneEvents, body, &event, &isEnd) == 0, lastKeyTimestamp != header.ts else { return }
            lastKeyTimestamp = header.ts
            let digit = telev_code2digit(event)
            if digit > 0, let scalar = Unicode.Scalar(UInt32(digit)) { continuation.yield(.keyPressed(String(Character(scalar)))) }
            return
        }
        guard header.pt == payloadType else { ignored.withLock { $0 += 1 }; return }
        let payload = Array(UnsafeBufferPointer(start: mbuf_buf(body), count: count))
        var samples: [Int16] = []
        for output in jitterBuffer.insert(sequenceNumber: header.seq, payload: payload) {
            switch (output, codec.law) {
            case (.packet(let packet), let law?):
                samples += G711.decode(packet, law: law)
                lastPacketSamples = packet.count
            case (.lost, .some):
                samples += [Int16](repeating: 0, count: lastPacketSamples)
            case (.packet(let packet), nil):
                samples += decoder?.decode(packet) ?? []
            case (.lost(let next), nil):
                samples += decoder?.conceal(samples: codec.frameSamples, next: next) ?? []
            }
        }
        if !samples.isEmpty { continuation.yield(.audio(samples)) }
    }

    /// Sends the packets due (the queued speech, else silence), then waits for the next.
    func tick() {
        guard !isEnded, isAnswered, let rtp else { return }
        let now = ContinuousClock.now
        // A loop that fell far behind starts over rather than burst.
        if let due = nextFrameAt, now - due > .milliseconds(200) { nextFrameAt = now }
        while let due = nextFrameAt ?? Optional(now), due <= now {
            // A key press takes the packet's place; the speech waits for it.
            if sendKeyPacket(rtp) {
                timestamp &+= codec.timestampStep
                nextFrameAt = due + .milliseconds(20)
                continue
            }
            let (taken, stopped): ((frame: RTCOutgoingAudio.Frame, starts: String?, stops: String?)?, String?) = outgoing.withLock {
                if let taken = $0.queue.takeFrame() { return (taken, nil) }
                return (nil, $0.queue.finishPlaying())
            }
            if let stopped { continuation.yield(.outputStopped(responseID: stopped)) }
            if let stops = taken?.stops { continuation.yield(.outputStopped(responseID: stops)) }
            if let starts = taken?.starts { continuation.yield(.outputStarted(responseID: starts)) }
            let payload = taken?.frame.packet ?? silence
            if !isHeld, let packet = mbuf_alloc(Int(RTP_HEADER_SIZE) + payload.count) {
                packet.pointee.pos = Int(RTP_HEADER_SIZE)
                _ = payload.withUnsafeBufferPointer { mbuf_write_mem(packet, $0.baseAddress, $0.count) }
                packet.pointee.pos = Int(RTP_HEADER_SIZE)
                _ = rtp_send(rtp, &remote, false, marker, payloadType, timestamp, packet)
                _ = mem_deref(packet)
                marker = false
            }
            timestamp &+= codec.timestampStep
            nextFrameAt = due + .milliseconds(20)
        }
        let wait = (nextFrameAt ?? now) - now
        let milliseconds = max(1, wait.components.seconds * 1_000 + wait.components.attoseconds / 1_000_000_000_000_000)
        tmr_start(timer, UInt64(milliseconds), sipCallTick, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Sends the next RFC 4733 packet of the key being pressed, if any; whether it sent one.
    private func sendKeyPacket(_ rtp: OpaquePointer) -> Bool {
        guard let events = telephoneEvents, let payloadType = outgoingEventPayloadType else { return false }
        if pressedKey == nil, !pendingKeys.isEmpty {
            let code = pendingKeys.removeFirst()
            _ = telev_send(events, code, false)
            pressedKey = (code, 10)
        }
        if var key = pressedKey {
            key.ticksLeft -= 1
            if key.ticksLeft == 5 { _ = telev_send(events, key.code, true) }
            pressedKey = key.ticksLeft > 0 ? key : nil
        }
        guard let packet = mbuf_alloc(Int(RTP_HEADER_SIZE) + 16) else { return false }
        defer { _ = mem_deref(packet) }
        packet.pointee.pos = Int(RTP_HEADER_SIZE)
        packet.pointee.end = Int(RTP_HEADER_SIZE)
        var startsEvent = false
        guard telev_poll(events, &startsEvent, packet) == 0, packet.pointee.end > Int(RTP_HEADER_SIZE) else { return false }
        if startsEvent { keyTimestamp = timestamp }
        packet.pointee.pos = Int(RTP_HEADER_SIZE)
        if !isHeld { _ = rtp_send(rtp, &remote, false, startsEvent, payloadType, keyTimestamp, packet) }
        return true
    }

    /// Ends the call from the server's side, on the loop: BYE once answered, else `480` (a
    /// placed call still ringing is cancelled as its session is freed).
    func terminate(reason: String) {
        guard !isEnded else { return }
        if !isAnswered, !isOutbound, let session { _ = parley_sipsess_reject(session, 480, "Temporarily Unavailable", "") }
        if isOutbound { settleDial(.failed(.cancelled(reason: reason))) }
        end(reason: reason)
    }

    /// libre closed the session: a BYE or CANCEL from the other side, a final failure to a
    /// placed call's INVITE, or a transport error.
    func closed(error: Int32, message: UnsafePointer<sip_msg>?) {
        if let message, !message.pointee.req, message.pointee.scode >= 300 {
            let (status, phrase) = (Int(message.pointee.scode), message.pointee.reason.text)
            if isOutbound { settleDial(.failed(SIPDialFailure(status: status, reason: phrase))) }
            return end(reason: "\(status) \(phrase)")
        }
        // libre reports a BYE and a CANCEL alike (ECONNRESET): which one it was follows from the answer.
        let reason: String
        if error == ECONNRESET || error == 0 {
            reason = isAnswered ? (isOutbound ? "the callee hung up" : "the caller hung up") : "the caller cancelled"
        } else {
            reason = String(cString: strerror(error))
        }
        end(reason: reason)
    }

    /// Ends the call: BYE when answered (libre sends it as the session is freed), the media
    /// freed, `.ended` reported.
    func end(reason: String) {
        guard !isEnded else { return }
        isEnded = true
        tmr_cancel(timer)
        tmr_cancel(ringTimer)
        session = mem_deref(UnsafeMutableRawPointer(session)).map(OpaquePointer.init)
        rtp = mem_deref(UnsafeMutableRawPointer(rtp)).map(OpaquePointer.init)
        media = nil
        sdp = mem_deref(UnsafeMutableRawPointer(sdp)).map(OpaquePointer.init)
        telephoneEvents = mem_deref(UnsafeMutableRawPointer(telephoneEvents)).map(OpaquePointer.init)
        transferSubscription = release(transferSubscription)
        finishTransfer(.refused("the call ended"))
        if isOutbound { settleDial(.failed(.failed(status: nil, reason: reason))) }
        continuation.yield(.ended(reason: reason))
        continuation.finish()
        endpoint?.forget(self)
    }
}

/// libre's RTP handler: the call is the context.
func sipRTPReceived(
    _ source: UnsafePointer<sa>?, _ header: UnsafePointer<rtp_header>?, _ body: UnsafeMutablePointer<mbuf>?, _ context: UnsafeMutableRawPointer?
) {
    guard let source, let header, let body, let context else { return }
    Unmanaged<SIPCall>.fromOpaque(context).takeUnretainedValue().received(from: source, header: header.pointee, payload: body)
}

/// libre's timer handler: the call's pacing.
func sipCallTick(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<SIPCall>.fromOpaque(context).takeUnretainedValue().tick()
}
