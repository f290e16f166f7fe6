import Foundation
import ParleySync

/// The slots of a `LocalLLMServer` (`--parallel`), lent to conversations one each.
///
/// A llama-server slot keeps the KV cache of the last prompt it read. A conversation that
/// keeps its own slot has its history cached there, so each turn's request reads only the new
/// messages. Without a slot of its own (`id_slot` -1), llama-server places a request on the
/// slot whose cache matches it best, which serves one conversation well but lets several
/// conversations evict each other's caches.
final class LocalLLMSlots: Sendable {
    /// A slot lent to one conversation; it is free again once the lease is gone.
    final class Lease: Sendable {
        /// The slot's number, llama-server's `id_slot`.
        let slot: Int
        private let slots: LocalLLMSlots

        fileprivate init(slot: Int, slots: LocalLLMSlots) {
            self.slot = slot
            self.slots = slots
        }

        deinit { slots.release(slot) }
    }

    private let lent: Locked<[Bool]>

    /// `count` slots, none lent.
    init(count: Int) {
        lent = Locked([Bool](repeating: false, count: max(0, count)))
    }

    /// Lends the lowest free slot, or `nil` when every slot is lent.
    func lease() -> Lease? {
        let slot = lent.withLock { lent -> Int? in
            guard let free = lent.firstIndex(of: false) else { return nil }
            lent[free] = true
            return free
        }
        return slot.map { Lease(slot: $0, slots: self) }
    }

    private func release(_ slot: Int) {
        lent.withLock { $0[slot] = false }
    }
}
