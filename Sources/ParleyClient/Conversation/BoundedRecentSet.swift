/// A set that remembers only its most recent `capacity` members, so remembering every id a
/// long session ever saw cannot grow without bound.
struct BoundedRecentSet<Element: Hashable & Sendable>: Sendable {
    let capacity: Int
    private var members: Set<Element> = []
    private var order: [Element] = []

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    func contains(_ element: Element) -> Bool { members.contains(element) }

    /// Adds `element`; returns `false` when it was already there.
    @discardableResult
    mutating func insert(_ element: Element) -> Bool {
        guard members.insert(element).inserted else { return false }
        order.append(element)
        if order.count > capacity {
            let overflow = order.count - capacity
            for old in order.prefix(overflow) { members.remove(old) }
            order.removeFirst(overflow)
        }
        return true
    }

    mutating func removeAll() {
        members.removeAll()
        order.removeAll()
    }
}
