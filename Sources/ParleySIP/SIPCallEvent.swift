/// What a SIP call reports to its owner, in order.
public enum SIPCallEvent: Sendable {
    /// The caller acknowledged the answer (ACK): the call is up.
    case established
    /// The caller's audio at the call's `sampleRate`, in sequence order after the jitter buffer,
    /// lost packets concealed (silence for G.711, Opus's concealment and in-band FEC).
    case audio([Int16])
    /// The caller pressed a key (RFC 4733 `telephone-event`): `0`–`9`, `*`, `#`, `A`–`D`.
    case keyPressed(String)
    /// The first frame of a response's audio went out.
    case outputStarted(responseID: String)
    /// The last queued frame of a response's audio went out.
    case outputStopped(responseID: String)
    /// The call is over (BYE, CANCEL, a failure, or the server hung up); nothing follows.
    case ended(reason: String)
}
