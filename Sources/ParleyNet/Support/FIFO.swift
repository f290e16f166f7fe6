/// A first-in first-out queue with amortised O(1) push and pop.
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    /// Whether the queue holds nothing.
    var isEmpty: Bool { head == storage.count }

    /// The number of queued elements.
    var count: Int { storage.count - head }

    /// Appends `element` at the back.
    mutating func push(_ element: Element) {
        storage.append(element)
    }

    /// Removes and returns the front element, or `nil` when empty.
    mutating func pop() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes everything.
    mutating func removeAll() {
        storage.removeAll()
        head = 0
    }
}
