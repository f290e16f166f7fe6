import ParleyCore

/// `end_call`: the agent hangs up a phone call, once its goodbye has been heard.
struct EndCallTool: Tool {
    let hangUp: PendingHangUp

    var name: String { "end_call" }
    var description: String {
        "Hang up the phone call when the conversation is over or the caller asks you to. Say goodbye in the same turn: "
            + "the call ends once your last words have been heard."
    }
    var parameters: JSONValue {
        [
            "type": "object",
            "properties": ["reason": ["type": "string", "description": "Why the call ends, in a few words."]],
        ]
    }

    func call(arguments: JSONValue) async throws -> String {
        hangUp.request()
        return "The call will end once what you say now has been heard. Say a short goodbye."
    }
}
