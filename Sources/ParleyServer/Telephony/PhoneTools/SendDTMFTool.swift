import ParleyCore
import ParleySIP

/// `send_dtmf`: the agent presses keys on a SIP call (RFC 4733), to get through a phone menu.
struct SendDTMFTool: Tool {
    let call: SIPCall

    /// The most keys one call presses.
    static let maximumKeys = 32

    var name: String { "send_dtmf" }
    var description: String {
        "Press keys on the phone (DTMF), for example to choose from a phone menu or enter an extension: digits 0-9, * and #."
    }
    var parameters: JSONValue {
        [
            "type": "object",
            "properties": ["digits": ["type": "string", "description": "The keys to press, in order, such as \"1\" or \"4711#\"."]],
            "required": ["digits"],
        ]
    }

    func call(arguments: JSONValue) async throws -> String {
        let digits = arguments["digits"]?.stringValue ?? ""
        let allowed = Set("0123456789*#ABCDabcd")
        guard !digits.isEmpty, digits.count <= Self.maximumKeys, digits.allSatisfy(allowed.contains) else {
            throw ToolError("digits must be 1 to \(Self.maximumKeys) of 0-9, *, # and A-D.")
        }
        guard call.takesKeyPresses else { throw ToolError("This call does not take key presses (the other side did not offer RFC 4733 events).") }
        call.send(keys: digits)
        return "Pressed \(digits)."
    }
}
