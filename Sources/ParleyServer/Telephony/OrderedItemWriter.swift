import Foundation
import ParleyStore

/// Stores a session's completed items one at a time, in the order they completed, off the
/// session's executor; `finish()` waits for the last one.
final class OrderedItemWriter: Sendable {
    private let continuation: AsyncStream<ItemRecord>.Continuation
    private let task: Task<Void, Never>

    /// Starts writing to `store`; `onFailure` hears of each item that could not be stored, and why.
    init(store: any ParleyStore, onFailure: @escaping @Sendable (ItemRecord, any Error) -> Void) {
        let (items, continuation) = AsyncStream.makeStream(of: ItemRecord.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        task = Task {
            for await item in items {
                do {
                    try await store.appendItem(item)
                } catch {
                    onFailure(item, error)
                }
            }
        }
    }

    /// Queues `item` (a new item, or a new version of one already stored).
    func append(_ item: ItemRecord) { continuation.yield(item) }

    /// Waits until every queued item is stored.
    func finish() async {
        continuation.finish()
        await task.value
    }
}
