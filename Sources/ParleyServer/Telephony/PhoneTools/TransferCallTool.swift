import ParleyCore
import ParleySIP

/// `transfer_call`: the agent hands a phone call to a number or a SIP URI (a blind transfer: a
/// REFER on SIP, a `<Dial>` once the stream ends on Twilio); the call ends after the agent's
/// goodbye, and a refused transfer is told to the model.
struct TransferCallTool: Tool {
    /// Carries out the transfer to a target already checked (an E.164 number or a `sip:` URI).
    let transfer: @Sendable (_ target: String) async -> SIPCall.TransferOutcome
    let hangUp: PendingHangUp

    /// The tool for a SIP call: a REFER to the target (a number at the caller's trunk).
    static func sip(_ call: SIPCall, hangUp: PendingHangUp) -> TransferCallTool {
        TransferCallTool(transfer: { target in
            guard let uri = uri(for: target, host: call.sourceAddress) else { return .refused("not a number or SIP URI") }
            return await call.transfer(to: uri)
        }, hangUp: hangUp)
    }

    var name: String { "transfer_call" }
    var description: String {
        "Transfer the caller to another phone number (E.164, such as +14155550123) or SIP URI, for example a human colleague. "
            + "If it works, say a short goodbye: the call ends after it."
    }
    var parameters: JSONValue {
        [
            "type": "object",
            "properties": ["target": ["type": "string", "description": "The number (E.164) or SIP URI to transfer the caller to."]],
            "required": ["target"],
        ]
    }
    /// The caller has this long to accept the REFER.
    var timeout: Duration? { .seconds(15) }

    func call(arguments: JSONValue) async throws -> String {
        let target = arguments["target"]?.stringValue ?? ""
        guard Self.uri(for: target, host: "localhost") != nil else {
            throw ToolError("target must be an E.164 number such as +14155550123 or a sip: URI; \"\(target)\" is neither.")
        }
        switch await transfer(target) {
        case .accepted:
            hangUp.request()
            return "The caller is being transferred to \(target). Say a short goodbye; the call ends after it."
        case .refused(let reason):
            throw ToolError("The transfer to \(target) failed (\(reason)). Tell the caller, and carry on.")
        }
    }

    /// The SIP URI of `target`: a `sip:`/`sips:` URI as it is, an E.164 number at the caller's
    /// trunk (`host`); `nil` for anything else (nothing that could break out of the header).
    static func uri(for target: String, host: String) -> String? {
        if AgentTelephonySettings.isE164(target) { return "sip:\(target)@\(host.contains(":") ? "[\(host)]" : host)" }
        let lowered = target.lowercased()
        guard lowered.hasPrefix("sip:") || lowered.hasPrefix("sips:"), target.count <= 256,
              target.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && !"<>\"".unicodeScalars.contains($0) }) else { return nil }
        return target
    }
}
