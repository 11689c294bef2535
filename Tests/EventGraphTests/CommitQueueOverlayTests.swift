import LogFormat
import Testing

@testable import EventGraph

/// A queued save's unique tuples enter the queue's overlay from the table its uniqueness check built (taken whole
/// when nothing else is queued): the holders are those of releasing, then claiming, each tuple in turn.
@Suite("The commit queue's overlay of unique tuples")
struct CommitQueueOverlayTests {
    static func tuple(_ text: String) -> UniqueKey {
        UniqueKey(entityIndex: 0, ordinal: 0, values: [.string(text)])
    }

    static func entry(_ transactionID: UInt64) -> CommitQueue.Entry {
        CommitQueue.Entry(
            transactionID: transactionID, commitTimeMicroseconds: 0, nextKey: 0, staged: StagedChanges(),
            blobHandles: [], uniqueKeys: [],
            changeset: Changeset(
                transactionID: transactionID, commitTimeMicroseconds: 0, author: "", nextKey: 0, operations: []))
    }

    @Test func releasedThenClaimedTuplesInAnEmptyAndABusyQueue() {
        let (a, b, c) = (Self.tuple("a"), Self.tuple("b"), Self.tuple("c"))
        var queue = CommitQueue(lastTransactionID: 0, lastCommitTimeMicroseconds: 0)
        // Nothing queued: the claimed table becomes the overlay; a tuple released and claimed is the claimer's.
        queue.enqueue(Self.entry(1), releasing: [a, b], claiming: [b: 5, c: 6])
        #expect(queue.overlayHolders[a]?.key == .some(nil))
        #expect(queue.overlayHolders[b]?.key == 5 && queue.overlayHolders[c]?.key == 6)
        #expect(queue.overlayHolders.values.allSatisfy { $0.transactionID == 1 })
        #expect(Set(queue.queued[0].uniqueKeys) == [a, b, c])
        // A save queued behind it: its releases and claims go over the first save's.
        queue.enqueue(Self.entry(2), releasing: [c], claiming: [a: 9])
        #expect(queue.overlayHolders[a]?.key == 9 && queue.overlayHolders[a]?.transactionID == 2)
        #expect(queue.overlayHolders[b]?.key == 5 && queue.overlayHolders[b]?.transactionID == 1)
        #expect(queue.overlayHolders[c]?.key == .some(nil) && queue.overlayHolders[c]?.transactionID == 2)
        #expect(queue.lastTransactionID == 2)
        // Installing the first leaves only what the second wrote.
        #expect(queue.dequeue(through: 1).map(\.transactionID) == [1])
        #expect(Set(queue.overlayHolders.keys) == [a, c])
        #expect(queue.dequeue(through: 2).count == 1 && queue.overlayHolders.isEmpty)
    }
}
