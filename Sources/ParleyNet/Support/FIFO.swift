/// A first-in first-out queue with amortised O(1) push and pop.
///
/// A popped element is released at once (the queue keeps no reference to it), so a queue of
/// large payloads holds only the memory of what is still queued.
struct FIFO<Element> {
    private var storage: [Element?] = []
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
        let element = storage[head].take()
        head += 1
        if head == storage.count {
            // Empty again: start over at the front, keeping the capacity.
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
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
