@testable import ParleyNet
import Testing

@Suite("FIFO queue")
struct FIFOTests {
    /// A payload whose release the test can observe.
    final class Payload {}

    @Test func keepsOrderAcrossInterleavedPushesAndPops() {
        var queue = FIFO<Int>()
        var expected = 0
        var next = 0
        for round in 0..<500 {
            for _ in 0..<(round % 7 + 1) { queue.push(next); next += 1 }
            for _ in 0..<(round % 5 + 1) {
                guard let value = queue.pop() else { break }
                #expect(value == expected)
                expected += 1
            }
        }
        while let value = queue.pop() {
            #expect(value == expected)
            expected += 1
        }
        #expect(expected == next)
        #expect(queue.isEmpty)
    }

    @Test func releasesAPoppedElementAtOnce() {
        var queue = FIFO<Payload>()
        weak var first: Payload?
        weak var second: Payload?
        do {
            let a = Payload(), b = Payload(), c = Payload()
            first = a
            second = b
            queue.push(a)
            queue.push(b)
            queue.push(c)
        }
        _ = queue.pop()
        #expect(first == nil)
        #expect(queue.count == 2)
        _ = queue.pop()
        #expect(second == nil)
        #expect(queue.count == 1)
    }
}
