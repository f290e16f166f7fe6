import Foundation
import ParleyCore

/// Holds one scenario's conversation with a server over the realtime protocol, as a simulated
/// caller: each turn is typed, spoken (appended and committed, push-to-talk) or pressed on a
/// phone's keypad (`parley.key_press`), the reply is recorded until it is done, and an
/// interruption cuts it the way a client does (cancel, and truncate to what was heard).
struct ScenarioRunner: Sendable {
    /// The server.
    var server: ServerConnection
    /// The agent every scenario calls, overriding the scenarios' own.
    var agentID: String?
    /// The caller's voices and recordings.
    var caller: CallerAudio
    /// Scores the conversations of scenarios that ask for it.
    var judge: ConversationJudge?
    /// The directory WAV paths are relative to: the scenario file's.
    var directory: URL
    /// How long a turn may take, from the caller's input to the reply's end.
    var turnTimeoutMs = 60_000

    /// Holds the conversation of `scenario`.
    /// - Throws: `CommandFailure` when the server cannot be reached or refuses the session, or
    ///   the caller's audio cannot be made: nothing else would run either.
    func run(_ scenario: Scenario, repeatNumber: Int) async throws -> ScenarioRun {
        let clock = ContinuousClock()
        let started = clock.now
        let (link, events) = try await RealtimeLink.open(server, agentID: agentID ?? scenario.agentID)
        var signals = SessionSignals(events)
        defer {
            link.close()
            signals.stop()
        }
        var run = ScenarioRun(scenario: scenario.name, repeatNumber: repeatNumber, turns: [], durationMs: 0)
        run.failure = try await configure(scenario, link, &signals)
        var previous: TurnObservation?
        for (index, turn) in scenario.turns.enumerated() {
            var result = TurnResult(number: index + 1, kind: turn.input.kind, line: turn.line, said: turn.input.words, outcomes: [])
            if run.failure == nil, run.turns.allSatisfy({ $0.observation?.failure == nil }) {
                let next = index + 1 < scenario.turns.count ? scenario.turns[index + 1].input : nil
                var observation = try await self.turn(turn.input, after: previous, next: next, scenario.turnDetection, link, &signals)
                observation.handoffNames = await agentNames(observation.handoffs)
                previous = observation
                result.observation = observation
                result.said = result.said ?? observation.heard
                result.outcomes = turn.expectations.map { ExpectationOutcome($0, observation) }
            }
            run.turns.append(result)
        }
        if let rubric = scenario.judge, let judge, run.failure == nil, run.turns.allSatisfy({ $0.observation?.failure == nil }) {
            run.judge = await judge.score(run.turns, by: rubric)
        }
        run.durationMs = TurnRecorder.milliseconds(clock.now - started)
        return run
    }

    /// The names of the agents `ids`, as the server's agent API gives them; agents it does not
    /// show (a client token may not read them) keep their ids alone in reports.
    private func agentNames(_ ids: [String]) async -> [String: String] {
        var names: [String: String] = [:]
        for id in Set(ids) {
            if let name = try? await server.send("GET", "/v1/agents/\(id.pathComponentEncoded)")["name"]?.stringValue { names[id] = name }
        }
        return names
    }

    /// Sends the scenario's session settings (its turn detection, spoken replies) and waits for
    /// the server to take them; returns why it did not, if it did not.
    private func configure(_ scenario: Scenario, _ link: RealtimeLink, _ signals: inout SessionSignals) async throws -> String? {
        try link.send(.sessionUpdate(RealtimeSessionSettings(
            instructions: scenario.instructions, voice: scenario.agentVoice, outputModalities: [.audio],
            turnDetection: scenario.turnDetection == .serverVAD ? .serverVAD(ServerVADSettings()) : .manual
        )))
        let timeout = signals.deadline(in: turnTimeoutMs)
        while true {
            switch await signals.next() {
            case .event(.sessionUpdated, _): return nil
            case .event(.error(let error), _): return "the server refused the scenario's session settings: \(error.message)"
            case .event: continue
            case .deadline(let number) where number == timeout: return "the server did not take the session settings in time"
            case .deadline: continue
            case .closed: return "the server closed the session"
            }
        }
    }

    /// One second of silence after speech streamed under server turn detection, so the server
    /// hears the turn end.
    static let trailingSilence = [Int16](repeating: 0, count: RealtimeSessionSettings.supportedAudioRate)

    /// The words `next` says over the reply before it, synthesised ahead so they go out on time.
    private func speechOver(by next: CallerInput?) async throws -> [Int16] {
        switch next {
        case .interrupt(let words, let voice, _)?, .backchannel(let words, let voice, _)?: try await caller.speech([words], voice: voice, pauseMs: 0)
        default: []
        }
    }

    /// Sends spoken words: committed as one utterance under push-to-talk, streamed and followed
    /// by silence under server turn detection.
    private func speak(_ samples: [Int16], _ serverTurns: Bool, _ link: RealtimeLink) throws {
        if serverTurns { try link.sendAudio(samples + Self.trailingSilence) } else { try link.sendUtterance(samples) }
    }

    /// Presses `key` on the phone's keypad.
    private func press(_ key: Character, _ link: RealtimeLink) throws {
        try link.send(.keyPress(key: String(key), eventID: TurnRecorder.keyPressEventID))
    }

    /// Plays one caller turn and records the reply. When the `next` turn speaks over this reply
    /// (an interruption or a backchannel), under push-to-talk the caller cuts the reply itself;
    /// under server turn detection it says the words over the reply and the server judges them.
    private func turn(
        _ input: CallerInput, after previous: TurnObservation?, next: CallerInput?, _ turnDetection: CallerTurnDetection,
        _ link: RealtimeLink, _ signals: inout SessionSignals
    ) async throws -> TurnObservation {
        let clock = ContinuousClock()
        let started = clock.now
        let serverTurns = turnDetection == .serverVAD
        let speakOverAfterMs = next?.speaksOverReplyAfterMs
        let overlap = serverTurns ? try await speechOver(by: next) : []
        var recorder = TurnRecorder()
        // The keys still to press, and the wait before each.
        var keysToPress: Substring = ""
        var interKeyMs = 0
        switch input {
        case .text(let text):
            recorder = TurnRecorder(typed: text)
            try link.send(.conversationItemCreate(item: .message(id: nil, role: .user, content: [.inputText(text)])))
            try link.send(.responseCreate())
        case .keys(let keys, let wait):
            recorder = TurnRecorder(typed: "pressed \(keys)", repliesToPassOver: keys.count - 1)
            keysToPress = Substring(keys)
            interKeyMs = wait
            try press(keysToPress.removeFirst(), link)
        case .say(let fragments, let voice, let pauseMs):
            try speak(try await caller.speech(fragments, voice: voice, pauseMs: pauseMs), serverTurns, link)
        case .wav(let path):
            try speak(try await caller.recording(path, relativeTo: directory), serverTurns, link)
        case .interrupt(let words, let voice, _) where !serverTurns || previous?.spokeOverReply != true:
            try speak(try await caller.speech([words], voice: voice, pauseMs: 0), serverTurns, link)
        case .interrupt, .backchannel:
            // Already spoken over the previous reply: what remains is the server's answer to it,
            // if it made a turn of it.
            guard let previous, previous.spokeOverReply else {
                recorder.fail("the reply had ended before the backchannel (it had \(previous?.replyAudioMs ?? 0) ms of audio)")
                return recorder.observation
            }
            recorder = TurnRecorder(typed: previous.heardOverReply)
            let madeATurn = previous.heardOverReply != nil || previous.interruptionVerdict?.interrupts == true
            if case .backchannel = input, !madeATurn {
                recorder = TurnRecorder(typed: previous.interruptionVerdict?.words)
                return recorder.observation
            }
        }
        if keysToPress.isEmpty { recorder.inputSent(at: clock.now) }
        if serverTurns, speakOverAfterMs != nil { recorder.willSpeakOver() }
        var timeout = signals.deadline(in: turnTimeoutMs)
        var speakOver: Int?
        var nextKey = keysToPress.isEmpty ? nil : signals.deadline(in: interKeyMs)
        listening: while true {
            switch await signals.next() {
            case .deadline(let number) where number == nextKey:
                try press(keysToPress.removeFirst(), link)
                if keysToPress.isEmpty {
                    // The turn's reply is the last key's: its time counts from that press.
                    recorder.inputSent(at: clock.now)
                    timeout = signals.deadline(in: turnTimeoutMs)
                    nextKey = nil
                } else {
                    nextKey = signals.deadline(in: interKeyMs)
                }
            case .event(let event, let arrived):
                switch recorder.record(event, at: arrived) {
                case .listen: break
                case .requestReply: if !serverTurns { try link.send(.responseCreate()) }
                case .replyStarted: if let speakOverAfterMs { speakOver = signals.deadline(in: speakOverAfterMs) }
                case .finished: break listening
                }
            case .deadline(let number) where number == speakOver && serverTurns:
                guard !recorder.replyPlayedOut(by: clock.now) else {
                    if recorder.speechOverMissed() == .finished { break listening }
                    break
                }
                recorder.spokeOver()
                try link.sendAudio(overlap + Self.trailingSilence)
            case .deadline(let number) where number == speakOver:
                guard let itemID = recorder.replyAudioItemID, recorder.observation.responseStatus == nil else { break }
                recorder.interrupted()
                try link.send(.responseCancel(eventID: TurnRecorder.cancelEventID))
                try link.send(.conversationItemTruncate(
                    itemID: itemID, contentIndex: 0, audioEndMs: recorder.observation.replyAudioMs, eventID: TurnRecorder.truncateEventID
                ))
            case .deadline(let number) where number == timeout:
                recorder.fail("no reply within \(turnTimeoutMs / 1000) s")
                break listening
            case .deadline:
                break
            case .closed:
                recorder.fail("the server closed the session")
                break listening
            }
        }
        var observation = recorder.observation
        observation.durationMs = TurnRecorder.milliseconds(clock.now - started)
        return observation
    }
}
