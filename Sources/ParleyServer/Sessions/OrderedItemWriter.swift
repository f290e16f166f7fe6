import ParleyStore

/// Stores a session's items (and its turns' figures) in the order the session completed or deleted them, one store call
/// at a time, off the session's executor, so nothing a later event did lands before what an
/// earlier one did. Every door's sessions write through one; `finish()` waits for the last write.
final class OrderedItemWriter: Sendable {
    /// Why an item was not stored.
    enum Failure: Sendable {
        /// The session's instance was claimed by a newer connection, or this node lost its
        /// claim (see `SessionAdmission.supersededError`): nothing more can be stored, and the
        /// writer skips every later write.
        case superseded
        /// The store failed to write it.
        case storeFailed(any Error)
    }

    private enum Write: Sendable {
        case append(ItemRecord)
        case delete(itemID: String)
        case figures(TurnFiguresRecord)
    }

    /// A write, and what runs once it is done.
    private struct Queued: Sendable {
        var write: Write
        var then: (@Sendable () async -> Void)?
    }

    private let continuation: AsyncStream<Queued>.Continuation
    private let task: Task<Void, Never>

    /// Starts writing to `store` the items of `conversationID`; `onFailure` hears of each item
    /// that could not be stored, and why.
    init(store: any ParleyStore, conversationID: String, onFailure: @escaping @Sendable (ItemRecord, Failure) async -> Void) {
        let (writes, continuation) = AsyncStream.makeStream(of: Queued.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        task = Task {
            var superseded = false
            for await queued in writes {
                switch queued.write {
                case .append(let item) where !superseded:
                    do {
                        try await store.appendItem(item)
                    } catch let error as ClusterError where error.code == .staleOwner {
                        superseded = true
                        await onFailure(item, .superseded)
                    } catch {
                        await onFailure(item, .storeFailed(error))
                    }
                case .delete(let itemID) where !superseded:
                    // A delete that fails leaves the item stored; the session goes on without it.
                    _ = try? await store.deleteItem(conversationID: conversationID, id: itemID)
                case .figures(let figures) where !superseded:
                    // Figures that fail to store cost the console one turn's waterfall; the session goes on.
                    _ = try? await store.saveTurnFigures(figures)
                case .append, .delete, .figures:
                    break
                }
                await queued.then?()
            }
        }
    }

    /// Queues `item` (a new item, or a new version of one already stored). `then` runs once the
    /// write is done, stored or not (after `onFailure` heard of a failure).
    func append(_ item: ItemRecord, then: (@Sendable () async -> Void)? = nil) {
        continuation.yield(Queued(write: .append(item), then: then))
    }

    /// Queues the deletion of the item `itemID`; `then` runs once it is done.
    func delete(itemID: String, then: (@Sendable () async -> Void)? = nil) {
        continuation.yield(Queued(write: .delete(itemID: itemID), then: then))
    }

    /// Queues a turn's figures.
    func save(_ figures: TurnFiguresRecord) {
        continuation.yield(Queued(write: .figures(figures), then: nil))
    }

    /// Waits until every queued write is done; later ones are dropped.
    func finish() async {
        continuation.finish()
        await task.value
    }
}
