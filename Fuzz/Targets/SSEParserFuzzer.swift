import ParleyNet

/// libFuzzer entry: parses the input as a `text/event-stream` body, once in one piece and once
/// split at an input-chosen point, with a small event-size limit. Both must give the same
/// events (or both refuse the stream).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerSentEvents(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    let body = input.dropFirst()
    let split = body.startIndex + Int(input[0]) % (body.count + 1)
    let whole = parse([body])
    let pieces = parse([body[..<split], body[split...]])
    fuzzCheck(whole == pieces, "splitting the stream changed its events: \(String(describing: whole)) vs \(String(describing: pieces))")
    return 0
}

/// The events of a stream delivered in `pieces`, or `nil` when the parser refused it.
private func parse(_ pieces: [ArraySlice<UInt8>]) -> [ServerSentEvent]? {
    var parser = ServerSentEventParser(maxEventBytes: 256)
    var events: [ServerSentEvent] = []
    do {
        for piece in pieces { events += try parser.push(piece) }
    } catch {
        return nil
    }
    return events + parser.finish()
}
