import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A find-or-create whose lookup cannot load a checkpoint chunk throws the chunk's error (naming the file, the
/// entity, the chunk and its byte offset), inserts nothing and does not call `configure`, as a fetch does; a value
/// whose lookup needs no such chunk is found or created as before. Before, `fetchOrInsert` could not throw, and
/// ended the process (`fatalError`) for the holder lookup and for the row of the holder it found.
@Suite("A find-or-create whose lookup cannot load a chunk")
struct FetchOrInsertChunkFailureTests {
    @Test func theHolderLookupThrowsAndInsertsNothing() throws {
        let directory = TemporaryDirectory()
        // Item 5,000 is in the damaged entity chunk (chunk 1 of 3): the stored uniqueness index names it, and its
        // values are read from that chunk to check that it still holds the value.
        let (target, container) = try ChunkReadFailureTests.openIndexedStoreWithADamagedChunk(
            in: directory, damagingTheStoredIndex: false)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        var configured = 0
        let error = #expect(throws: EventGraphError.self) {
            try context.fetchOrInsert(
                IndexedItem.self, unique: \.handle, equals: StoredCheckpointIndexTests.identity(5_000)
            ) { _ in configured += 1 }
        }
        #expect(error?.code == .log)
        ChunkReadFailureTests.expectNamesTheItemChunk(error, target)
        #expect(configured == 0)
        #expect(!context.hasChanges)
        #expect(context.insertedObjects.isEmpty)

        // Values whose lookups read intact chunks only: an existing item is found, a new value is inserted.
        let found = try context.fetchOrInsert(
            IndexedItem.self, unique: \.handle, equals: StoredCheckpointIndexTests.identity(5))
        #expect(found.rank == 0)
        #expect(!found.objectID.isTemporary)
        let fresh = try context.fetchOrInsert(IndexedItem.self, unique: \.handle, equals: "fresh") { $0.rank = 7 }
        #expect(fresh.objectID.isTemporary)
        try context.save()
        #expect(
            try StoredCheckpointIndexTests.fetch(identity: "fresh", in: container.newBackgroundContext()).count == 1)
    }

    /// The holder is found in the uniqueness entries built from the chunks (a checkpoint without stored uniqueness
    /// indexes, the 1.3 layout), with no chunk read; its chunk was evicted since, and reading it again fails.
    @Test func theRowOfAFoundHolderThrowsWhenItsChunkCannotBeReadAgain() throws {
        let directory = TemporaryDirectory()
        try StoredCheckpointIndexTests.compactedStore(at: directory.file(), count: 9_000)
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration()
        configuration.decodedChunkByteBudget = 1
        configuration.faultInjector = faults
        let container = try ModelContainer(
            path: directory.file(), model: StoredCheckpointIndexTests.model, configuration: configuration)
        defer { try? container.close() }
        container.store.state.withLock { state in
            state.storedUniqueIndexes = []
            state.pendingUniqueEntities.insert(StoredCheckpointIndexTests.itemEntity)
        }
        // Builds the uniqueness entries from every item chunk; only the chunk read last stays decoded after it.
        try container.store.buildPendingUniqueEntries(for: [StoredCheckpointIndexTests.itemEntity])
        let items = StoredCheckpointIndexTests.state(of: container).version(
            ofEntity: StoredCheckpointIndexTests.itemEntity)
        let first = try #require(items.checkpointChunk(at: 0))
        #expect(!first.isDecoded)
        faults.failReads(LazyColumnChunk.readRetryCount + 1, at: ChunkReadFailureTests.headerReads(of: first))

        let context = container.newBackgroundContext()
        let error = #expect(throws: EventGraphError.self) {
            try context.fetchOrInsert(
                IndexedItem.self, unique: \.handle, equals: StoredCheckpointIndexTests.identity(0))
        }
        #expect(error?.isFailedRead == true)
        let message = error?.message ?? ""
        #expect(message.contains("chunk 0 of entity IndexedItem"), "\(message)")
        #expect(!context.hasChanges)

        // A fetch by the unique value reads the same row, and throws too.
        faults.failReads(LazyColumnChunk.readRetryCount + 1, at: ChunkReadFailureTests.headerReads(of: first))
        #expect(throws: EventGraphError.self) {
            try StoredCheckpointIndexTests.fetch(identity: StoredCheckpointIndexTests.identity(0), in: context)
        }

        // A failed read is not kept: once reads succeed, the item is found.
        let found = try context.fetchOrInsert(
            IndexedItem.self, unique: \.handle, equals: StoredCheckpointIndexTests.identity(0))
        #expect(!found.objectID.isTemporary)
        #expect(found.rank == 0)
        #expect(!context.hasChanges)
    }
}
