import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A save's uniqueness check reads the checkpoint's stored uniqueness index and the object an entry names: a chunk
/// it cannot load fails the save with the chunk's error and leaves the store exactly as before (the log unchanged,
/// the context's changes still pending). Before, the check ended the process, under the store's lock.
@Suite("A save whose uniqueness check cannot load a chunk")
struct UniquenessCheckChunkFailureTests {
    static func byteCount(of path: String) throws -> UInt64 {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64)
    }

    @Test(arguments: [false, true])
    func theSaveThrowsAndChangesNothing(damagingTheStoredIndex: Bool) throws {
        let directory = TemporaryDirectory()
        // Item 5,000 is in the damaged entity chunk; with the stored index damaged too, the index's rebuild from the
        // entity's chunks meets the damaged one.
        let (target, container) = try ChunkReadFailureTests.openIndexedStoreWithADamagedChunk(
            in: directory, damagingTheStoredIndex: damagingTheStoredIndex)
        defer { try? container.close() }
        let byteCount = try Self.byteCount(of: directory.file())
        let lastTransactionID = container.store.lastTransactionID
        let context = container.newBackgroundContext()
        let item = IndexedItem()
        context.insert(item)
        item.handle = StoredCheckpointIndexTests.identity(5_000)

        let error = #expect(throws: EventGraphError.self) { try context.save() }
        ChunkReadFailureTests.expectNamesTheItemChunk(error, target)
        #expect(error?.code == .log)
        #expect(try Self.byteCount(of: directory.file()) == byteCount)
        #expect(container.store.lastTransactionID == lastTransactionID)
        #expect(context.hasChanges)
        #expect(item.objectID.isTemporary)
        #expect(context.insertedObjects.contains { $0 === item })

        // What does not need the chunk still saves.
        item.handle = "fresh"
        try context.save()
        #expect(container.store.lastTransactionID == lastTransactionID + 1)
        #expect(
            try StoredCheckpointIndexTests.fetch(identity: "fresh", in: container.newBackgroundContext()).count == 1)
    }

    @Test func anUpsertWhoseHolderLookupCannotLoadAChunkThrowsAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let (target, container) = try ChunkReadFailureTests.openIndexedStoreWithADamagedChunk(
            in: directory, damagingTheStoredIndex: false)
        defer { try? container.close() }
        let byteCount = try Self.byteCount(of: directory.file())
        let store = container.store
        let model = StoredCheckpointIndexTests.model
        let entity = model.entities[StoredCheckpointIndexTests.itemEntity]
        let identity = store.reserveIdentity(for: entity)
        let handle = try #require(entity.properties.firstIndex { $0.name == "handle" })
        let reference = ObjectReference(identity, entityIndex: entity.index)
        let request = CommitRequest(
            author: "",
            operations: [
                .insert(
                    reference,
                    [
                        PropertyChange(
                            propertyIndex: UInt32(handle),
                            value: .attribute(.string(StoredCheckpointIndexTests.identity(5_000))))
                    ])
            ],
            readRows: [:], mergePolicy: .error, upserts: [identity: 0])
        let error = #expect(throws: EventGraphError.self) { _ = try store.commit(request) }
        ChunkReadFailureTests.expectNamesTheItemChunk(error, target)
        #expect(try Self.byteCount(of: directory.file()) == byteCount)
    }

    /// The tuples a save's objects give up are looked up while it is prepared: that lookup used to run once the
    /// changeset was in the log, where a chunk it could not read ended the process. (At 51b3c69 this save went
    /// through instead: the index chunk kept the failed read as damage and the index was replaced by a rebuild.)
    @Test func aSaveThatGivesUpATupleWhoseIndexChunkCannotBeReadThrowsBeforeTheLog() throws {
        let directory = TemporaryDirectory()
        try StoredCheckpointIndexTests.compactedStore(at: directory.file(), count: 9_000)
        let faults = FaultInjector()
        let (container, unique, first) = try IndexChunkReadFailureTests.open(directory.file(), faults: faults)
        defer { try? container.close() }
        let byteCount = try Self.byteCount(of: directory.file())
        let lastTransactionID = container.store.lastTransactionID
        // Item 0 is found through the rank index: its identity's index chunk (the first) is not read.
        let context = container.newBackgroundContext()
        let item = try #require(
            try context.fetch(FetchDescriptor<IndexedItem>(filter: .equal("rank", .int64(0)))).first {
                $0.handle == StoredCheckpointIndexTests.identity(0)
            })
        #expect(!first.isLoaded)
        // Its new identity sorts after every stored one: the check that it is free reads no index chunk; giving up
        // the old one reads the first, whose reads fail.
        item.handle = "zzz"
        faults.failReads(CheckpointChunkRead.retryCount + 1, at: IndexChunkReadFailureTests.headerReads(of: first))
        let error = #expect(throws: EventGraphError.self) { try context.save() }
        #expect(error?.isFailedRead == true)
        #expect(error?.message.contains("chunk 0 of the uniqueness index (handle)") == true, "\(error?.message ?? "")")
        #expect(try Self.byteCount(of: directory.file()) == byteCount)
        #expect(container.store.lastTransactionID == lastTransactionID)
        #expect(context.hasChanges)
        #expect(unique.replacement.entries == nil)

        // The read is not kept: the same save goes through, and the old identity is free again.
        try context.save()
        let reader = container.newBackgroundContext()
        #expect(try StoredCheckpointIndexTests.fetch(identity: "zzz", in: reader).map(\.rank) == [0])
        #expect(
            try StoredCheckpointIndexTests.fetch(identity: StoredCheckpointIndexTests.identity(0), in: reader).isEmpty)
    }
}
