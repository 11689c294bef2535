import Testing

@testable import EventGraph

/// `ByteArena.shrinkToFit` of an emptied array gives `[]` without making an array of capacity 0 through
/// `unsafeUninitializedCapacity` (`Concurrency.md`, rule 5). The race that call makes is not visible to the thread
/// sanitizer in a debug build here (the generic call's write happens inside the standard library, which is not
/// instrumented); `EmptyArrayConcurrencyTests` shows it for the reads that make `[UInt8]`. This checks the result.
@Suite("An emptied column array shrunk")
struct EmptiedArrayShrinkTests {
    @Test("shrinking an array with no elements and spare capacity gives an empty array without capacity")
    func shrinkingAnEmptiedArray() {
        var emptied: [UInt32] = [1, 2, 3]
        emptied.removeAll(keepingCapacity: true)
        ByteArena.shrinkToFit(&emptied)
        #expect(emptied.isEmpty && emptied.capacity == 0)
        var kept: [UInt32] = [1, 2, 3]
        kept.reserveCapacity(64)
        ByteArena.shrinkToFit(&kept)
        #expect(kept == [1, 2, 3] && kept.capacity < 64)
    }
}
