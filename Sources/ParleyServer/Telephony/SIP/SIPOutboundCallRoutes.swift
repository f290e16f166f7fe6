import Foundation
import ParleyCore
import ParleyNet

/// Calls Parley places, behind the server secret: `POST /v1/calls` (`to`, `agent`,
/// `ring_timeout_seconds` and `machine_detection`) dials through the outbound trunk and answers
/// 201 with the call as it starts out; `GET /v1/calls/{id}` says where it is (`dialing`, `ringing`, `answered`,
/// `completed`, `busy`, `no_answer`, `rejected`, `failed`).
enum SIPOutboundCallRoutes {
    /// The ring timeout when the request names none, and the longest one it may name.
    static let defaultRingTimeout = 30, longestRingTimeout = 120

    /// Registers the routes; `door` is the SIP door once the server opened it.
    static func register(on router: inout Router, calls: SIPOutboundCalls, door: @escaping @Sendable () -> SIPDoor?, context: ServerContext) {
        router.post("/v1/calls") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            guard let door = door(), let trunk = door.settings.outboundTrunk else {
                return .error(
                    status: 400, code: "sip_trunk_not_configured",
                    message: "No SIP trunk is configured for the calls Parley places: set PARLEY_SIP_PORT and PARLEY_SIP_OUTBOUND_TRUNK."
                )
            }
            guard case .object(let fields)? = try? JSONValue(parsing: String(decoding: request.body, as: UTF8.self)) else {
                return invalid("The body is a JSON object: {\"to\": \"sip:+14155550123@sip.example.com\", \"agent\": \"agt_…\"}.")
            }
            guard let to = fields["to"]?.stringValue, !to.isEmpty else {
                return invalid("'to' is required: the sip: URI or E.164 number to call.")
            }
            guard let target = SIPOutboundCalls.targetURI(for: to, trunk: trunk) else {
                return invalid("'to' must be a sip: URI such as sip:+14155550123@sip.example.com, or an E.164 number such as +14155550123.")
            }
            guard let agentID = fields["agent"]?.stringValue, !agentID.isEmpty else {
                return invalid("'agent' is required: the id of the agent that talks on the call.")
            }
            var ringTimeout = defaultRingTimeout
            if let requested = fields["ring_timeout_seconds"] {
                guard let seconds = requested.numberValue, seconds == seconds.rounded(), (1...Double(longestRingTimeout)).contains(seconds) else {
                    return invalid("'ring_timeout_seconds' must be a whole number of seconds from 1 to \(longestRingTimeout).")
                }
                ringTimeout = Int(seconds)
            }
            let machineDetection: SIPMachineDetection?
            switch SIPMachineDetection.parse(fields["machine_detection"]) {
            case .success(let detection): machineDetection = detection
            case .failure(let problem): return invalid(problem.message)
            }
            do {
                guard try await context.store.agent(id: agentID) != nil else {
                    return .error(status: 404, code: "agent_not_found", message: "No agent \(agentID).")
                }
            } catch {
                return .error(status: 503, code: "store_unavailable", message: "The agent could not be read: \(error).")
            }
            do throws(SIPOutboundCalls.PlacementError) {
                let record = try calls.place(
                    to: to, target: target, agentID: agentID, ringTimeout: .seconds(ringTimeout), machineDetection: machineDetection, door: door,
                    context: context
                )
                return JSONResponse.ok(record.json, status: 201)
            } catch {
                switch error {
                case .refused(let refusal): return .error(status: refusal.httpStatus, code: refusal.code, message: refusal.message)
                case .notSent(let problem): return invalid("The call could not be placed: \(problem).")
                case .tooManyCalls(let problem):
                    return .error(status: 503, code: "too_many_calls", message: "The call was not placed: \(problem); try again shortly.")
                }
            }
        }
        router.get("/v1/calls/{id}") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            let id = request.pathParameters["id"] ?? ""
            guard let record = calls.record(id) else {
                return .error(status: 404, code: "call_not_found", message: "No call \(id) placed by this server.")
            }
            return JSONResponse.ok(record.json)
        }
    }

    private static func invalid(_ message: String) -> HTTPResponse {
        .error(status: 400, code: "invalid_request", message: message)
    }
}
