import ParleyCore

/// libFuzzer entry: decodes the input as a realtime client event (GA and beta) and as a server
/// event. Whatever decodes must encode to text that decodes again, and one encode/decode pass
/// must reach a fixed point (encoding may drop what a dialect cannot say, like GA `temperature`,
/// but never change meaning on a second pass).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRealtimeEvents(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    for dialect in RealtimeDialect.allCases {
        guard let event = try? RealtimeClientEvent.decode(text, dialect: dialect) else { continue }
        let normalised = roundTrip(event, dialect)
        fuzzCheck(normalised != nil, "client event \(event) encodes to text that does not decode (\(dialect))")
        fuzzCheck(normalised.flatMap { roundTrip($0, dialect) } == normalised, "client event \(event) is unstable (\(dialect))")
    }
    if let event = try? RealtimeServerEvent.decode(text) {
        for dialect in RealtimeDialect.allCases {
            let normalised = roundTrip(event, dialect)
            // An event with no form in this dialect encodes to nothing.
            guard event.encode(dialect: dialect) != nil else { continue }
            fuzzCheck(normalised != nil, "server event \(event) encodes to text that does not decode (\(dialect))")
            fuzzCheck(normalised.flatMap { roundTrip($0, dialect) } == normalised, "server event \(event) is unstable (\(dialect))")
        }
    }
    return 0
}

private func roundTrip(_ event: RealtimeClientEvent, _ dialect: RealtimeDialect) -> RealtimeClientEvent? {
    try? RealtimeClientEvent.decode(event.encode(dialect: dialect), dialect: dialect)
}

private func roundTrip(_ event: RealtimeServerEvent, _ dialect: RealtimeDialect) -> RealtimeServerEvent? {
    event.encode(dialect: dialect).flatMap { try? RealtimeServerEvent.decode($0) }
}
