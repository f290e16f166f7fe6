import ParleyRTC
import Testing

/// The jitter buffer as a table: packets in, what to decode or conceal out.
@Suite struct JitterBufferTests {
    private func run(_ sequence: [UInt16], depth: Int = 2) -> [JitterBuffer.Output] {
        var buffer = JitterBuffer(depth: depth)
        return sequence.flatMap { buffer.insert(sequenceNumber: $0, payload: [UInt8(truncatingIfNeeded: $0)]) }
    }

    @Test func inOrderPacketsComeOutAtOnce() {
        #expect(run([1, 2, 3, 4]) == [.packet([1]), .packet([2]), .packet([3]), .packet([4])])
    }

    @Test func reorderedPacketsComeOutInOrder() {
        #expect(run([1, 3, 2]) == [.packet([1]), .packet([2]), .packet([3])])
    }

    @Test func aMissingPacketIsConcealedWithTheNextOneForFEC() {
        // Packet 2 is waited for while two later ones wait, and concealed when a third arrives.
        #expect(run([1, 3, 4]) == [.packet([1])])
        #expect(run([1, 3, 4, 5]) == [.packet([1]), .lost(next: [3]), .packet([3]), .packet([4]), .packet([5])])
    }

    @Test func latePacketsAndDuplicatesAreDropped() {
        #expect(run([1, 2, 3, 1, 3, 4]) == [.packet([1]), .packet([2]), .packet([3]), .packet([4])])
    }

    @Test func sequenceNumbersWrapAround() {
        #expect(run([65_534, 65_535, 0, 1]) == [.packet([254]), .packet([255]), .packet([0]), .packet([1])])
    }

    @Test func aLongJumpRestartsTheStreamInsteadOfConcealingIt() {
        let output = run([1, 2, 3, 1_000, 1_001])
        #expect(output == [.packet([1]), .packet([2]), .packet([3]), .packet([232]), .packet([233])]) // 1_000 & 0xFF
    }

    @Test func drainReleasesWhatWaits() {
        var buffer = JitterBuffer(depth: 3)
        #expect(buffer.insert(sequenceNumber: 7, payload: [7]) == [.packet([7])])
        #expect(buffer.insert(sequenceNumber: 9, payload: [9]) == [])
        #expect(buffer.drain() == [.lost(next: [9]), .packet([9])])
    }
}
