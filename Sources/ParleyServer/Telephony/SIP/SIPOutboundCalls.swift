import Foundation
import ParleyCore
import ParleyNet
import ParleySIP
import ParleySync

/// Calls Parley places (`POST /v1/calls`) through the outbound trunk: each is dialled at once,
/// followed from dialling to its end, and once answered runs as a session of its agent through
/// the SIP door like a call that came in (same admission, sideband and call control under its
/// id). How it went stays readable (`GET /v1/calls/{id}`) and is logged
/// (`sip.outbound_call_placed`, `…_ringing`, `…_answered`, `…_finished`).
final class SIPOutboundCalls: Sendable {
    /// Where a placed call is.
    enum Status: String, Sendable {
        case dialing, ringing, answered, completed, busy
        case noAnswer = "no_answer"
        case rejected, failed, canceled

        /// Whether the call is over.
        var isFinal: Bool { ![.dialing, .ringing, .answered].contains(self) }
    }

    /// One placed call, as `GET /v1/calls/{id}` shows it.
    struct Record: Sendable {
        var id: String
        /// Whom the request named (a number or a URI), and the SIP URI called for it.
        var to: String, uri: String
        var from: String
        var agentID: String
        var status = Status.dialing
        var sipStatus: Int?
        var reason: String?
        var sipCallID: String
        var createdAt = Int(Date().timeIntervalSince1970)
        var answeredAt: Int?
        var endedAt: Int?
        /// With answering-machine detection: `human`, `machine` or `unknown`, and whether a machine got the message.
        var answeredBy: String?
        var messageLeft: Bool?

        var json: JSONValue {
            var fields: [String: JSONValue] = [
                "id": .string(id), "object": "call", "direction": "outbound", "to": .string(to), "uri": .string(uri), "from": .string(from),
                "agent": .string(agentID), "status": .string(status.rawValue), "sip_call_id": .string(sipCallID),
                "created_at": .number(Double(createdAt)),
            ]
            if let sipStatus { fields["sip_status"] = .number(Double(sipStatus)) }
            if let reason { fields["reason"] = .string(reason) }
            if let answeredAt { fields["answered_at"] = .number(Double(answeredAt)) }
            if let endedAt { fields["ended_at"] = .number(Double(endedAt)) }
            if let answeredBy { fields["answered_by"] = .string(answeredBy) }
            if let messageLeft { fields["message_left"] = .bool(messageLeft) }
            return .object(fields)
        }
    }

    /// Why a call was not placed.
    enum PlacementError: Error {
        /// The node cannot take another session for this callee now.
        case refused(SessionAdmission.Refusal)
        /// libre would not send the INVITE.
        case notSent(String)
        /// As many calls ring as the endpoint allows.
        case tooManyCalls(String)
    }

    /// Finished calls kept for `GET /v1/calls/{id}`, at most.
    static let keptFinishedCalls = 1_000

    private let records = Locked<[String: Record]>([:])
    /// Ids of finished calls, oldest first.
    private let finished = Locked<[String]>([])

    /// The call `id`, placed by this node, while it is kept.
    func record(_ id: String) -> Record? { records.withLock { $0[id] } }

    /// Places a call to `to` (the SIP URI `target`) as a session of `agentID`, ringing at most
    /// `ringTimeout`, first telling a machine from a person with `machineDetection`; its record
    /// as it starts out (dialing).
    func place(
        to: String, target: String, agentID: String, ringTimeout: Duration, machineDetection: SIPMachineDetection? = nil, door: SIPDoor,
        context: ServerContext
    ) throws(PlacementError) -> Record {
        let dial = SIPDial(
            target: target, trunk: door.settings.outboundTrunk, caller: door.settings.callerID,
            credentials: door.settings.outboundCredentials, ringTimeout: ringTimeout
        )
        let callee = LiveSessions.Owner(user: "phone:\(dial.targetUser)", tokenID: "sip:outbound")
        if let refusal = SessionAdmission.precheck(owner: callee, context: context) {
            context.metrics.doorRefused(door: "sip", reason: refusal.code)
            throw .refused(refusal)
        }
        let call: SIPCall
        do {
            call = try door.dial(dial)
        } catch {
            throw error.tooManyCalls ? .tooManyCalls(error.description) : .notSent(error.description)
        }
        // The backend knows the call by this id, as a call that came in: for the sideband and `/v1/realtime/calls/{id}/…`.
        let record = Record(id: RealtimeID.make("sip"), to: to, uri: target, from: door.settings.callerID, agentID: agentID, sipCallID: call.id)
        records.withLock { $0[record.id] = record }
        door.control.add(call, id: record.id)
        context.log.log("sip.outbound_call_placed", session: call.id, ["call_id": .string(record.id), "agent": .string(agentID)])
        Task.detached { [self] in
            await withTaskExecutorPreference(globalConcurrentExecutor) { await follow(call, id: record.id, agentID: agentID, machineDetection: machineDetection, door: door, context: context) }
        }
        return record
    }

    /// Follows a placed call from dialling to its end.
    private func follow(
        _ call: SIPCall, id: String, agentID: String, machineDetection: SIPMachineDetection?, door: SIPDoor, context: ServerContext
    ) async {
        var outcome: SIPDialProgress?
        for await progress in call.dialProgress {
            if progress == .ringing {
                update(id) { $0.status = .ringing }
                context.log.log("sip.outbound_call_ringing", session: call.id, ["call_id": .string(id)])
            } else {
                outcome = progress
            }
        }
        switch outcome {
        case .answered?:
            update(id) {
                $0.status = .answered
                $0.answeredAt = Int(Date().timeIntervalSince1970)
            }
            context.log.log("sip.outbound_call_answered", session: call.id, ["call_id": .string(id)])
            let (status, reason) = await serveAnswered(call, id: id, agentID: agentID, machineDetection: machineDetection, door: door, context: context)
            door.control.remove(id)
            finish(id, status, sipStatus: nil, reason: reason, call: call, context: context)
        case .failed(let failure)?:
            door.control.remove(id)
            let (status, reason): (Status, String) = switch failure {
            case .busy: (.busy, "the callee is busy")
            case .noAnswer: (.noAnswer, "nobody answered")
            case .rejected(_, let phrase): (.rejected, "the callee's side refused the call: \(phrase)")
            case .failed(_, let problem): (.failed, problem)
            case .cancelled(let why): (.canceled, why)
            }
            finish(id, status, sipStatus: failure.status, reason: reason, call: call, context: context)
        case .ringing?, nil:
            door.control.remove(id)
            finish(id, .failed, sipStatus: nil, reason: "the call ended before it was answered", call: call, context: context)
        }
    }

    /// An answered call: told a person from a machine first when asked, then run as a session of
    /// `agentID` (a person) or dealt with (a machine); how it ended.
    private func serveAnswered(
        _ call: SIPCall, id: String, agentID: String, machineDetection: SIPMachineDetection?, door: SIPDoor, context: ServerContext
    ) async -> (Status, reason: String?) {
        var heard: [Int16] = []
        if let machineDetection {
            switch await machineDetection.run(on: call, providers: context.providers.current) {
            case .person(let answeredBy, let audio):
                detected(id, answeredBy: answeredBy, call: call, context: context)
                heard = audio
            case .machine(let messageLeft):
                update(id) { $0.messageLeft = messageLeft }
                detected(id, answeredBy: "machine", call: call, context: context)
                return (.completed, messageLeft ? "a machine answered; the message was left" : "a machine answered")
            case .ended:
                return (.completed, "the call ended while it was told who answered")
            }
        }
        if let problem = await door.serveAnswered(call, callID: id, agentID: agentID, heard: heard) { return (.failed, problem) }
        return (.completed, nil)
    }

    /// Records and logs who answered call `id`.
    private func detected(_ id: String, answeredBy: String, call: SIPCall, context: ServerContext) {
        update(id) { $0.answeredBy = answeredBy }
        context.log.log("sip.outbound_call_detected", session: call.id, ["call_id": .string(id), "answered_by": .string(answeredBy)])
    }

    private func update(_ id: String, _ change: (inout Record) -> Void) {
        records.withLock { records in
            guard var record = records[id] else { return }
            change(&record)
            records[id] = record
        }
    }

    /// Records the end of call `id`, logs it, and forgets the oldest finished calls beyond the kept number.
    private func finish(_ id: String, _ status: Status, sipStatus: Int?, reason: String?, call: SIPCall, context: ServerContext) {
        update(id) {
            $0.status = status
            $0.sipStatus = sipStatus
            $0.reason = reason
            $0.endedAt = Int(Date().timeIntervalSince1970)
        }
        var fields: [String: JSONScalarField] = ["call_id": .string(id), "status": .string(status.rawValue)]
        if let sipStatus { fields["sip_status"] = .number(Double(sipStatus)) }
        if let reason { fields["reason"] = .string(reason) }
        context.log.log("sip.outbound_call_finished", session: call.id, fields)
        let forgotten: [String] = finished.withLock { ids in
            ids.append(id)
            let excess = max(0, ids.count - Self.keptFinishedCalls)
            defer { ids.removeFirst(excess) }
            return Array(ids.prefix(excess))
        }
        records.withLock { records in for old in forgotten { records[old] = nil } }
    }

    /// The SIP URI to call for `to`: a `sip:`/`sips:` URI as it is, an E.164 number at the
    /// trunk's host (`sip:+14155550123@sip.example.com`); `nil` for anything else.
    static func targetURI(for to: String, trunk: String) -> String? {
        if AgentTelephonySettings.isE164(to) {
            let hostPort = trunk.drop { $0 != ":" }.dropFirst().prefix { $0 != ";" && $0 != "?" }
            return "sip:\(to)@\(hostPort.split(separator: "@").last ?? "")"
        }
        guard SIPSettings.isTrunkURI(to), to.contains("@") else { return nil }
        return to
    }
}
