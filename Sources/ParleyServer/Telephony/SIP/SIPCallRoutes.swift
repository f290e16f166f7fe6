import Foundation
import ParleyCore
import ParleyNet
import ParleySIP

/// OpenAI's call control for SIP calls, behind the server secret: `POST /v1/realtime/calls/{id}/`
/// `accept` (a body of session settings, and Parley's `agent`), `reject` (`status_code`), `refer`
/// (`target_uri`) and `hangup`.
enum SIPCallRoutes {
    static func register(on router: inout Router, control: SIPCallControl, context: ServerContext) {
        router.post("/v1/realtime/calls/{id}/accept") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            let callID = request.pathParameters["id"] ?? ""
            let body = request.body.isEmpty ? JSONValue.object([:]) : (try? JSONValue(parsing: String(decoding: request.body, as: UTF8.self)))
            guard case .object(var fields)? = body else {
                return .error(status: 400, code: "invalid_request", message: "The body is a JSON object of session settings (and 'agent').")
            }
            let agentID = fields.removeValue(forKey: "agent")?.stringValue
            let update = fields.isEmpty ? nil : #"{"type":"session.update","session":"# + JSONValue.object(fields).jsonText + "}"
            if let update {
                do {
                    guard case .sessionUpdate = try RealtimeClientEvent.decode(update, dialect: .ga) else { throw CancellationError() }
                } catch {
                    return .error(status: 400, code: "invalid_session", message: "The body is not valid session settings: \(error)")
                }
            }
            return decided(callID, .accept(agentID: agentID, sessionUpdate: update), control: control)
        }
        router.post("/v1/realtime/calls/{id}/reject") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            let status = (try? JSONValue(parsing: String(decoding: request.body, as: UTF8.self)))?["status_code"]?.numberValue ?? 603
            guard (400...699).contains(status) else {
                return .error(status: 400, code: "invalid_request", message: "status_code must be a SIP failure status, 400 to 699.")
            }
            return decided(request.pathParameters["id"] ?? "", .reject(status: UInt16(status)), control: control)
        }
        router.post("/v1/realtime/calls/{id}/refer") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            let callID = request.pathParameters["id"] ?? ""
            guard let call = control.call(callID) else { return notFound(callID) }
            let target = (try? JSONValue(parsing: String(decoding: request.body, as: UTF8.self)))?["target_uri"]?.stringValue ?? ""
            guard let uri = TransferCallTool.uri(for: target, host: call.sourceAddress) else {
                return .error(status: 400, code: "invalid_request", message: "target_uri must be a sip: URI or an E.164 number.")
            }
            switch await call.transfer(to: uri) {
            case .accepted:
                call.hangUp()
                return JSONResponse.ok(["id": callID, "object": "realtime.call.referred"])
            case .refused(let reason):
                return .error(status: 409, code: "refer_failed", message: "The caller did not take the transfer: \(reason).")
            }
        }
        router.post("/v1/realtime/calls/{id}/hangup") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            let callID = request.pathParameters["id"] ?? ""
            if control.decide(callID, .reject(status: 603)) { return JSONResponse.ok(["id": callID, "object": "realtime.call.hung_up"]) }
            guard let call = control.call(callID) else { return notFound(callID) }
            call.hangUp()
            return JSONResponse.ok(["id": callID, "object": "realtime.call.hung_up"])
        }
    }

    private static func decided(_ callID: String, _ decision: SIPCallControl.Decision, control: SIPCallControl) -> HTTPResponse {
        guard control.decide(callID, decision) else {
            return .error(status: 404, code: "call_not_found", message: "No call \(callID) is ringing and waiting for a decision.")
        }
        return JSONResponse.ok(["id": callID, "object": "realtime.call.decided"])
    }

    private static func notFound(_ callID: String) -> HTTPResponse {
        .error(status: 404, code: "call_not_found", message: "No live SIP call \(callID).")
    }
}
