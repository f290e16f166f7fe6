import CLibre

extension pl {
    /// The text a libre pointer-length string points at ("" when unset).
    var text: String {
        guard let start = p, l > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: start, count: l), as: UTF8.self)
    }
}

extension sa {
    /// The address as text (`203.0.113.7`, `2001:db8::1`), without the port.
    var hostText: String {
        var copy = self
        var buffer = [CChar](repeating: 0, count: 64)
        guard sa_ntop(&copy, &buffer, Int32(buffer.count)) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
