import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// What a save's last step and a merge read of checkpoint chunks, beside a compaction and over a chunk that was
/// evicted and cannot be read again.
///
/// A compaction (or an automatic checkpoint, which is one) does not replace the chunks of the store's state: it
/// writes a new file, and the state's checkpoint chunks keep being read from the file the store opened
/// (``CheckpointChunkSource``). A save pins the chunks of what it changes until it ends, and a commit that changes a
/// chunk makes it resident in every later version. So `finishSave`'s lookup of an object the commit returned no row
/// for reads a pinned chunk, and a root context's merge of a commit reads resident chunks only, compaction or not.
/// A child's merge of its parent's changes made in memory (a processed change, a rollback) does look the object up
/// beneath, in a chunk nothing pinned: before, that lookup ended the process when the chunk could not be read
/// (`fatalError` in `Store.failLookUp`, from `ObjectStore.committedRow(of:entityIndex:)` in `refreshMerged`); now
/// the object becomes a fault that keeps its unsaved changes, and its next read looks it up again.
@Suite("A save's last step and a merge over checkpoint chunks, beside a compaction")
struct MergeChunkFailureTests {
    typealias Helpers = ChildContextChunkFailureTests

    @Test func aCompactionBetweenASavesInstallAndItsLastStepReadsNoChunk() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, _, boxes) = try ChunkReadFailureTests.storeWithAnEvictedChunk(
            at: directory.file(), faults: faults)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let students = try context.fetch(FetchDescriptor<Student>())
        let unchanged = try #require(students.first { boxes[1].mayHold($0.objectID.key) })
        let renamed = try #require(students.first { boxes[0].mayHold($0.objectID.key) })
        let name = unchanged.name
        // Set to the value the store holds: listed as updated, but no operation; the commit returns no row for it,
        // and the save's last step looks its row up in the store (in chunk 1).
        unchanged.name = name
        renamed.name = "renamed"
        #expect(Set(context.updatedObjects.map(\.objectID)) == [unchanged.objectID, renamed.objectID])

        // Between the install and the save's last step (a commit observer runs on the saving thread): a compaction,
        // then every read of chunk 1 fails.
        let compacted = LockedValue<UInt64?>(nil)
        let readsAfterTheCompaction = LockedValue(0)
        let (token, _) = container.store.observeCommits { _ in
            compacted.withLock { $0 = try? container.store.compact().lastTransactionID }
            readsAfterTheCompaction.withLock { $0 = boxes[1].readCount }
            Helpers.failEveryRead(of: boxes[1], after: 0, faults)
        }
        defer { container.store.removeCommitObserver(token) }
        try context.save()
        #expect(compacted.withLock { $0 } == container.store.lastTransactionID)
        // The compaction kept the state's chunks (chunk 0 is in memory since the commit changed it) …
        #expect(
            DecodedChunkCacheTests.studentBoxes(of: container).map(ObjectIdentifier.init) == [
                ObjectIdentifier(boxes[1]), ObjectIdentifier(boxes[2]),
            ])
        // … and the save's last step read none: chunk 1 was pinned by the save.
        #expect(boxes[1].readCount == readsAfterTheCompaction.withLock { $0 })
        #expect(faults.failedReadCount == 0)
        #expect(boxes[1].pinCount == 0)
        #expect(!context.hasChanges)

        Helpers.stopFailingReads(faults)
        #expect(unchanged.name == name)
        #expect(renamed.name == "renamed")
    }

    @Test func aRootContextsMergeAfterACompactionReadsNoChunk() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, _, boxes) = try ChunkReadFailureTests.storeWithAnEvictedChunk(
            at: directory.file(), faults: faults)
        defer { try? container.close() }
        let reader = container.newBackgroundContext()
        reader.automaticallyMergesChangesFromParent = true
        let inChunk1 = try reader.fetch(FetchDescriptor<Student>()).filter { boxes[1].mayHold($0.objectID.key) }
        let (renamed, deleted) = (inChunk1[0], inChunk1[1])
        _ = (renamed.name, deleted.name)

        let writer = container.newBackgroundContext()
        try #require(writer.object(with: renamed.objectID) as? Student).name = "merged"
        writer.delete(try #require(writer.object(with: deleted.objectID)))
        try writer.save()
        _ = try container.store.compact()
        try Helpers.evictChunk1(of: container, boxes[1])
        let reads = boxes[1].readCount

        Helpers.failEveryRead(of: boxes[1], after: 0, faults)
        reader.processPendingChanges()
        #expect(renamed.name == "merged")
        #expect(deleted.isDeleted)
        #expect(boxes[1].readCount == reads)
        #expect(faults.failedReadCount == 0)
    }

    /// A child that merges its parent's changes looks each changed object up beneath the parent; a change the parent
    /// made in memory and processed leaves the object's chunk on disk. When it cannot be read, the child's object
    /// becomes a fault (its unsaved changes kept) instead of ending the process, and reads the parent's values once
    /// reads succeed. (A parent's rollback reports the values it rolls back to, read from the chunk before any child
    /// merges: see ``RollbackChunkFailureTests``.)
    @Test func aChildsMergeOverAChunkThatCannotBeReadLeavesAFault() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, parent, student, box) = try Helpers.openWithAStudentOfChunk1(in: directory, faults: faults)
        defer { try? container.close() }
        let child = parent.makeChildContext()
        child.automaticallyMergesChangesFromParent = true
        child.mergePolicy = .objectWins
        let mine = try #require(child.object(with: student.objectID) as? Student)
        let name = mine.name
        mine.name = "the child's"
        try Helpers.evictChunk1(of: container, box)

        Helpers.failEveryRead(of: box, after: 0, faults)
        student.year = 9
        parent.processPendingChanges()
        #expect(faults.failedReadCount > 0)
        #expect(mine.isFault)
        #expect(child.hasChanges)
        #expect(box.pinCount == 0)

        Helpers.stopFailingReads(faults)
        #expect(mine.year == 9)
        #expect(mine.name == "the child's")
        #expect(student.name == name)
    }
}
