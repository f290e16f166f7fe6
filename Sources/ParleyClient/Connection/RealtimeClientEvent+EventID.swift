import ParleyCore

extension RealtimeClientEvent {
    /// The same event carrying `eventID` as its `event_id`.
    func withEventID(_ eventID: String) -> RealtimeClientEvent {
        switch self {
        case .sessionUpdate(let settings, _): .sessionUpdate(settings, eventID: eventID)
        case .inputAudioBufferAppend(let audio, _): .inputAudioBufferAppend(audio: audio, eventID: eventID)
        case .inputAudioBufferCommit: .inputAudioBufferCommit(eventID: eventID)
        case .inputAudioBufferClear: .inputAudioBufferClear(eventID: eventID)
        case .conversationItemCreate(let item, let previousItemID, _):
            .conversationItemCreate(item: item, previousItemID: previousItemID, eventID: eventID)
        case .conversationItemDelete(let itemID, _): .conversationItemDelete(itemID: itemID, eventID: eventID)
        case .conversationItemRetrieve(let itemID, _): .conversationItemRetrieve(itemID: itemID, eventID: eventID)
        case .conversationItemTruncate(let itemID, let contentIndex, let audioEndMs, _):
            .conversationItemTruncate(itemID: itemID, contentIndex: contentIndex, audioEndMs: audioEndMs, eventID: eventID)
        case .responseCreate(let options, _): .responseCreate(options, eventID: eventID)
        case .responseCancel(let responseID, _): .responseCancel(responseID: responseID, eventID: eventID)
        case .outputAudioBufferClear: .outputAudioBufferClear(eventID: eventID)
        case .keyPress(let key, _): .keyPress(key: key, eventID: eventID)
        }
    }
}
