import Foundation

/// The server tools a voice session has of its own (its MCP servers'), which of them wait for
/// the client's approval, and the approvals given: each request is answered at most once, so
/// an approved call runs once.
struct SessionTools: Sendable {
    private(set) var tools: [any Tool] = []
    private(set) var approvalRequired: Set<String> = []
    private var approvedCalls: [ToolCall] = []
    private var answeredRequests: Set<String> = []

    /// The providers' `base` tools with these added (a session tool replaces one of the same name).
    func registry(adding base: ToolRegistry) -> ToolRegistry {
        var registry = base
        for tool in tools { registry.register(tool) }
        return registry
    }

    mutating func replace(_ tools: [any Tool], approvalRequired: Set<String>) {
        self.tools = tools
        self.approvalRequired = approvalRequired
    }

    /// Records the answer to request `requestItemID` about `call`; `false` when it was answered before.
    mutating func answer(requestItemID: String, call: ToolCall, approve: Bool) -> Bool {
        guard answeredRequests.insert(requestItemID).inserted else { return false }
        if approve { approvedCalls.append(call) }
        return true
    }

    /// The approved calls not yet run; they are run by the caller, once.
    mutating func takeApprovedCalls() -> [ToolCall] {
        defer { approvedCalls = [] }
        return approvedCalls
    }
}

extension VoiceSession {
    /// Gives the session its own server tools (an MCP server's, listed for this session),
    /// replacing the previous ones; calls of `approvalRequired` wait for the client's approval.
    public func useSessionTools(_ tools: [any Tool], approvalRequired: Set<String>) {
        sessionTools.replace(tools, approvalRequired: approvalRequired)
    }

    /// Answers the approval request `requestItemID` (a call the model made of a tool that waits
    /// for approval). Approved, the call runs at the start of the next response; declined, the
    /// model is told so in a tool result stored as `responseItemID`.
    /// - Returns: `false` when there is no such request or it was already answered.
    public func answerApproval(requestItemID: String, responseItemID: String, approve: Bool, reason: String?) -> Bool {
        guard case .assistant(_, let calls, _)? = ledger.message(id: requestItemID), calls.count == 1,
              sessionTools.approvalRequired.contains(calls[0].name),
              sessionTools.answer(requestItemID: requestItemID, call: calls[0], approve: approve) else { return false }
        if !approve {
            let because = reason.map { " Their reason: \($0)" } ?? ""
            recordToolResult(.tool(callID: calls[0].id, content: "Not run: the user declined this call.\(because)"), id: responseItemID)
        }
        return true
    }
}
