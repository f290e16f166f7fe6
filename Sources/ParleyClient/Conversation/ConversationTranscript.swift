import Foundation
import ParleyCore

/// The conversation's entries, built from server events and the person's own actions: the
/// pure heart of `ConversationModel`, tested as tables of events.
///
/// The person's spoken words are replaced as recognition refines them (Parley's
/// `parley.input_transcript.partial` is a full replacement; the standard transcription delta
/// appends), the agent's words are appended by item id, and events that arrive twice, late
/// or early change nothing they should not: a transcript before its item waits for the item,
/// a delta before `response.output_item.added` opens the entry, a partial after the final
/// transcript is ignored, an interrupted answer only ever gets shorter.
///
/// ```swift
/// var transcript = ConversationTranscript()
/// transcript.addSpokenUtterance(text: "")
/// transcript.apply(.inputAudioBufferCommitted(itemID: "item_1", previousItemID: nil))
/// ```
public struct ConversationTranscript: Sendable {
    /// The entries, oldest first.
    public private(set) var messages: [ConversationMessage] = []

    /// Transcript text of a spoken item that is not in `messages` yet.
    private struct EarlyText: Sendable {
        enum State: Sendable { case partial, final, failed }
        var text = ""
        var state = State.partial
    }

    /// How a user transcript event changes the words.
    private enum UserTextChange {
        case replace(String)
        case append(String)
        case final(String)
        case failed
    }

    /// Local ids of released holds whose server item is not known yet, oldest first.
    private var pendingUtterances: [String] = []
    private var earlyText: [String: EarlyText] = [:]
    private var earlyTextOrder: [String] = []
    /// Items whose partials arrive as full replacements; their appending deltas are ignored.
    private var replacedByPartials = BoundedRecentSet<String>(capacity: 64)
    /// Items removed from the list: later events must not bring them back.
    private var retiredItems = BoundedRecentSet<String>(capacity: 256)
    /// Responses the person interrupted: their late output is ignored.
    private var discardedResponses = BoundedRecentSet<String>(capacity: 64)
    private var audioMarks: [String: SpokenAudioMarks] = [:]
    private var audioMarkOrder: [String] = []
    private var nextLocalNumber = 1

    /// At most this many early transcripts and spoken items' audio marks are kept.
    private static let earlyTextLimit = 32
    private static let audioMarkLimit = 8

    /// Creates an empty transcript.
    public init() {}

    /// The newest words heard for speech that has no entry yet (the live caption while the
    /// person holds to talk), with the server item they belong to.
    public private(set) var unplacedSpeech: (itemID: String, text: String)?

    // MARK: - The person's actions

    /// Adds the entry of a released hold, already showing `text` (the live caption so far);
    /// the next spoken item the server commits becomes this entry.
    /// - Returns: the entry's id.
    @discardableResult
    public mutating func addSpokenUtterance(text: String) -> String {
        let id = "local-\(nextLocalNumber)"
        nextLocalNumber += 1
        messages.append(ConversationMessage(id: id, itemID: nil, role: .user, isSpoken: true, text: text, status: .transcribing))
        pendingUtterances.append(id)
        unplacedSpeech = nil
        return id
    }

    /// Marks the newest released hold that has no server item as not sent (the server
    /// refused to commit it).
    public mutating func failNewestPendingUtterance() {
        guard let id = pendingUtterances.popLast(), let index = messages.firstIndex(where: { $0.id == id }) else { return }
        messages[index].status = .failed
    }

    /// Adds a typed message the client sent as item `itemID`.
    public mutating func addTypedMessage(itemID: String, text: String) {
        guard index(ofItem: itemID) == nil else { return }
        messages.append(ConversationMessage(id: itemID, itemID: itemID, role: .user, isSpoken: false, text: text, status: .complete))
    }

    /// The person cut the agent off: the item that was playing keeps the words heard up to
    /// its played position, the rest of `responseID`'s entries keep what was heard, and any
    /// later output of the response is ignored.
    public mutating func interrupt(responseID: String?, playback: PlaybackPosition?) {
        if let playback { interruptItem(playback.itemID, heardMilliseconds: playback.playedMilliseconds) }
        guard let responseID else { return }
        discardedResponses.insert(responseID)
        for message in messages where message.responseID == responseID && message.status == .streaming {
            if message.role == .agent, let itemID = message.itemID {
                interruptItem(itemID, heardMilliseconds: nil)
            } else if let index = messages.firstIndex(where: { $0.id == message.id }) {
                messages[index].status = .interrupted
            }
        }
    }

    /// The session was lost: nothing more will arrive for what was in progress.
    public mutating func sessionEnded() {
        for index in messages.indices.reversed() {
            switch (messages[index].role, messages[index].status) {
            case (.user, .transcribing):
                if messages[index].text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    remove(at: index)
                } else {
                    messages[index].status = .complete
                }
            case (.agent, .streaming):
                messages[index].status = .interrupted
            case (.tool, .streaming):
                messages[index].status = .interrupted
            default:
                break
            }
        }
        pendingUtterances = []
        earlyText = [:]
        earlyTextOrder = []
        audioMarks = [:]
        audioMarkOrder = []
        unplacedSpeech = nil
    }

    /// Whether the output of `responseID` is being ignored because the person interrupted it.
    public func isDiscarded(responseID: String) -> Bool {
        discardedResponses.contains(responseID)
    }

    // MARK: - Server events

    /// Applies one server event; events that do not concern the entries are ignored.
    public mutating func apply(_ event: RealtimeServerEvent) {
        switch event {
        case .inputAudioBufferCommitted(let itemID, _):
            placeSpokenItem(itemID)
        case .conversationItemAdded(let item, _):
            itemAdded(item)
        case .conversationItemDone(let item, _), .responseOutputItemDone(_, _, let item):
            itemDone(item)
        case .inputAudioTranscriptionDelta(let itemID, _, let delta):
            guard !replacedByPartials.contains(itemID) else { return }
            changeUserText(itemID, .append(delta))
        case .inputAudioTranscriptionCompleted(let itemID, _, let transcript, _):
            changeUserText(itemID, .final(transcript))
        case .inputAudioTranscriptionFailed(let itemID, _, _):
            changeUserText(itemID, .failed)
        case .parley(let type, let payload):
            applyParleyEvent(type, payload)
        case .responseOutputItemAdded(let responseID, _, let item):
            guard let itemID = item.id, case .message(role: .assistant, _) = item.kind else { return }
            openAgentEntry(itemID, responseID: responseID)
        case .responseOutputAudioTranscriptDelta(let position, let delta):
            appendAgentText(position, delta, spoken: true)
        case .responseOutputTextDelta(let position, let delta):
            appendAgentText(position, delta, spoken: false)
        case .responseOutputAudioTranscriptDone(let position, let text), .responseOutputTextDone(let position, let text):
            guard let index = openAgentEntry(position.itemID, responseID: position.responseID) else { return }
            setAgentText(at: index, text)
        case .responseOutputAudioDelta(let position, let delta):
            guard let index = openAgentEntry(position.itemID, responseID: position.responseID),
                  messages[index].status == .streaming else { return }
            messages[index].isSpoken = true
            recordAudio(itemID: position.itemID, sampleCount: SpokenAudioMarks.sampleCount(ofBase64: delta), textLength: messages[index].text.count)
        case .responseDone(let response):
            finishResponse(response)
        case .conversationItemTruncated(let itemID, _, let audioEndMs):
            interruptItem(itemID, heardMilliseconds: audioEndMs)
        case .conversationItemDeleted(let itemID):
            if let index = index(ofItem: itemID) { remove(at: index) }
            retiredItems.insert(itemID)
        default:
            break
        }
    }

    // MARK: - The person's entries

    private mutating func placeSpokenItem(_ itemID: String) {
        guard index(ofItem: itemID) == nil, !retiredItems.contains(itemID) else { return }
        if unplacedSpeech?.itemID == itemID { unplacedSpeech = nil }
        let early = takeEarlyText(itemID)
        let index: Int
        if !pendingUtterances.isEmpty, let pending = messages.firstIndex(where: { $0.id == pendingUtterances[0] }) {
            pendingUtterances.removeFirst()
            messages[pending].itemID = itemID
            index = pending
        } else {
            messages.append(ConversationMessage(id: itemID, itemID: itemID, role: .user, isSpoken: true, text: "", status: .transcribing))
            index = messages.count - 1
        }
        guard let early else { return }
        switch early.state {
        case .partial: if !early.text.isEmpty { messages[index].text = early.text }
        case .final: finishUserText(at: index, early.text)
        case .failed: messages[index].status = .failed
        }
    }

    private mutating func itemAdded(_ item: RealtimeItem) {
        guard let itemID = item.id, !retiredItems.contains(itemID), index(ofItem: itemID) == nil else { return }
        switch item.kind {
        case .message(role: .user, let content):
            if let typed = content.lazy.compactMap({ if case .inputText(let text) = $0 { text } else { nil } }).first {
                messages.append(ConversationMessage(id: itemID, itemID: itemID, role: .user, isSpoken: false, text: typed, status: .complete))
                return
            }
            guard content.contains(where: { if case .inputAudio = $0 { true } else { false } }) else { return }
            placeSpokenItem(itemID)
            if let transcript = content.lazy.compactMap({ if case .inputAudio(_, let transcript?) = $0 { transcript } else { nil } }).first {
                changeUserText(itemID, .final(transcript))
            }
        case .message(role: .assistant, let content):
            let text = content.compactMap(\.text).joined()
            if item.status == .completed || item.status == .incomplete {
                let spoken = content.contains { if case .outputAudio = $0 { true } else { false } }
                let status: ConversationMessage.Status = item.status == .incomplete ? .interrupted : .complete
                messages.append(ConversationMessage(id: itemID, itemID: itemID, role: .agent, isSpoken: spoken, text: text, status: status))
            } else if let index = openAgentEntry(itemID, responseID: nil), !text.isEmpty {
                messages[index].text = text
            }
        default:
            break
        }
    }

    private mutating func itemDone(_ item: RealtimeItem) {
        guard let itemID = item.id, !retiredItems.contains(itemID) else { return }
        switch item.kind {
        case .message(role: .user, let content):
            if let transcript = content.lazy.compactMap({ if case .inputAudio(_, let transcript?) = $0 { transcript } else { nil } }).first {
                changeUserText(itemID, .final(transcript))
            }
        case .message(role: .assistant, let content):
            guard let index = index(ofItem: itemID) ?? openAgentEntry(itemID, responseID: nil) else { return }
            if !content.isEmpty { setAgentText(at: index, content.compactMap(\.text).joined()) }
            guard let current = self.index(ofItem: itemID), messages[current].status == .streaming else { return }
            switch item.status {
            case .incomplete?: messages[current].status = .interrupted
            case .completed?: messages[current].status = .complete
            default: break
            }
            dropIfSilent(at: current)
        default:
            break
        }
    }

    private mutating func changeUserText(_ itemID: String, _ change: UserTextChange) {
        guard let index = index(ofItem: itemID) else {
            guard !retiredItems.contains(itemID) else { return }
            rememberEarlyText(itemID, change)
            return
        }
        guard messages[index].role == .user else { return }
        switch change {
        case .replace(let text):
            guard messages[index].status == .transcribing else { return }
            messages[index].text = text
        case .append(let delta):
            guard messages[index].status == .transcribing else { return }
            messages[index].text += delta
        case .final(let text):
            finishUserText(at: index, text)
        case .failed:
            guard messages[index].status == .transcribing else { return }
            messages[index].status = .failed
        }
    }

    /// The final words of a spoken entry; speech that transcribed to nothing is no entry.
    private mutating func finishUserText(at index: Int, _ text: String) {
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            remove(at: index)
            return
        }
        messages[index].text = text
        messages[index].status = .complete
    }

    private mutating func rememberEarlyText(_ itemID: String, _ change: UserTextChange) {
        var early = earlyText[itemID] ?? EarlyText()
        switch change {
        case .replace(let text):
            guard early.state == .partial else { return }
            early.text = text
        case .append(let delta):
            guard early.state == .partial else { return }
            early.text += delta
        case .final(let text):
            early = EarlyText(text: text, state: .final)
        case .failed:
            guard early.state == .partial else { return }
            early.state = .failed
        }
        if earlyText.updateValue(early, forKey: itemID) == nil {
            earlyTextOrder.append(itemID)
            if earlyTextOrder.count > Self.earlyTextLimit { earlyText[earlyTextOrder.removeFirst()] = nil }
        }
        if early.state == .partial { unplacedSpeech = (itemID, early.text) }
    }

    private mutating func takeEarlyText(_ itemID: String) -> EarlyText? {
        guard let early = earlyText.removeValue(forKey: itemID) else { return nil }
        earlyTextOrder.removeAll { $0 == itemID }
        return early
    }

    private mutating func applyParleyEvent(_ type: String, _ payload: JSONValue) {
        switch type {
        case "parley.input_transcript.partial":
            guard let itemID = payload["item_id"]?.stringValue, let text = payload["text"]?.stringValue else { return }
            replacedByPartials.insert(itemID)
            changeUserText(itemID, .replace(text))
        case "parley.tool_call.started":
            guard let callID = payload["call_id"]?.stringValue else { return }
            let id = "tool-\(callID)"
            guard !messages.contains(where: { $0.id == id }) else { return }
            messages.append(ConversationMessage(
                id: id, itemID: nil, role: .tool, isSpoken: false, text: payload["name"]?.stringValue ?? "tool",
                status: .streaming, responseID: payload["response_id"]?.stringValue
            ))
        case "parley.tool_call.finished":
            guard let callID = payload["call_id"]?.stringValue,
                  let index = messages.firstIndex(where: { $0.id == "tool-\(callID)" }),
                  messages[index].status == .streaming else { return }
            messages[index].status = payload["is_error"]?.boolValue == true ? .failed : .complete
        default:
            break
        }
    }

    // MARK: - The agent's entries

    /// The agent entry of `itemID`, opened if needed; `nil` when the item or its response
    /// was dropped.
    @discardableResult
    private mutating func openAgentEntry(_ itemID: String, responseID: String?) -> Int? {
        if let index = index(ofItem: itemID) {
            if messages[index].responseID == nil { messages[index].responseID = responseID }
            return messages[index].role == .agent ? index : nil
        }
        guard !retiredItems.contains(itemID), !(responseID.map(discardedResponses.contains) ?? false) else { return nil }
        messages.append(ConversationMessage(
            id: itemID, itemID: itemID, role: .agent, isSpoken: false, text: "", status: .streaming, responseID: responseID
        ))
        return messages.count - 1
    }

    private mutating func appendAgentText(_ position: RealtimeContentPosition, _ delta: String, spoken: Bool) {
        guard !discardedResponses.contains(position.responseID),
              let index = openAgentEntry(position.itemID, responseID: position.responseID),
              messages[index].status == .streaming else { return }
        messages[index].text += delta
        if spoken { messages[index].isSpoken = true }
    }

    /// The full text of an agent entry from a `done` event; an interrupted entry keeps what
    /// was heard and only accepts a shorter account of it.
    private mutating func setAgentText(at index: Int, _ text: String) {
        switch messages[index].status {
        case .streaming, .complete:
            messages[index].text = text
        case .interrupted:
            if text.count < messages[index].text.count, messages[index].text.hasPrefix(text) {
                messages[index].text = text
            }
            dropIfSilent(at: index)
        case .transcribing, .failed:
            break
        }
    }

    private mutating func finishResponse(_ response: RealtimeResponse) {
        for index in messages.indices.reversed() where messages[index].responseID == response.id && messages[index].status == .streaming {
            switch response.status {
            case .cancelled: messages[index].status = .interrupted
            case .failed: messages[index].status = messages[index].role == .tool ? .failed : .interrupted
            case .completed, .incomplete, .inProgress: messages[index].status = .complete
            }
            dropIfSilent(at: index)
        }
    }

    /// Cuts an agent entry to what was heard once `heardMilliseconds` of its audio played
    /// (`nil`: all the audio that arrived was heard).
    private mutating func interruptItem(_ itemID: String, heardMilliseconds: Int?) {
        guard let index = index(ofItem: itemID), messages[index].role == .agent else { return }
        if let responseID = messages[index].responseID { discardedResponses.insert(responseID) }
        guard messages[index].status == .streaming || messages[index].status == .complete else { return }
        if messages[index].isSpoken {
            let marks = audioMarks[itemID] ?? SpokenAudioMarks()
            let played = heardMilliseconds ?? (marks.totalSamples / SpokenAudioMarks.samplesPerMillisecond + 1)
            messages[index].text = String(messages[index].text.prefix(marks.heardTextLength(playedMilliseconds: played)))
        }
        messages[index].status = .interrupted
        dropIfSilent(at: index)
    }

    private mutating func recordAudio(itemID: String, sampleCount: Int, textLength: Int) {
        if audioMarks[itemID] == nil {
            audioMarkOrder.append(itemID)
            if audioMarkOrder.count > Self.audioMarkLimit { audioMarks[audioMarkOrder.removeFirst()] = nil }
        }
        audioMarks[itemID, default: SpokenAudioMarks()].record(sampleCount: sampleCount, textLength: textLength)
    }

    /// An agent entry that ended with nothing said is no entry.
    private mutating func dropIfSilent(at index: Int) {
        guard messages[index].role == .agent, messages[index].status != .streaming,
              messages[index].text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return }
        remove(at: index)
    }

    // MARK: - Lookup

    private func index(ofItem itemID: String) -> Int? {
        messages.lastIndex { $0.itemID == itemID }
    }

    private mutating func remove(at index: Int) {
        let message = messages.remove(at: index)
        if let itemID = message.itemID { retiredItems.insert(itemID) }
        pendingUtterances.removeAll { $0 == message.id }
    }
}
