import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A schema frame after the checkpoint (an app opened the store with a model whose metadata differs: another
/// version identifier, a default) is followed by a store opened with the recorded model (tools): an entity whose
/// indexed attributes did not change keeps the checkpoint's stored indexes (format 1.4), so its first indexed
/// lookup reads the stored index and the chunks of what it finds. Before, every later schema frame dropped the
/// stored indexes: the first indexed lookup rebuilt the index from every chunk of the entity (nothing was lost,
/// but a 1M-object entity was read whole). An entity whose indexes did change still builds them from its chunks.
@Suite("A later schema frame and the checkpoint's stored indexes")
struct StoredIndexSchemaFrameTests {
    /// The compacted 9,000-item store (three entity chunks, rank = index / 100) at `path`, then opened with the
    /// item model under `version` with `indexes` (attribute names; `nil`: the model's own), which appends a schema
    /// frame after the checkpoint. Item 5 moves to rank 50 in a transaction before that frame, item 5,001 to rank 0
    /// in one after it: the tail's deferred index changes on both sides of the frame.
    static func storeWithALaterSchemaFrame(at path: String, version: String, indexes: [[String]]? = nil) throws {
        try StoredCheckpointIndexTests.compactedStore(at: path, count: 9_000)
        try setRank(50, ofItem: 5, at: path, model: StoredCheckpointIndexTests.model)
        var schema = StoredCheckpointIndexTests.model.schema
        schema.versionIdentifier = version
        if let indexes { schema.entities[0].indexes = indexes }
        try setRank(0, ofItem: 5_001, at: path, model: try ObjectModel(schema: schema))
        var versions: [String] = []
        try LogReader(path: path).scan { record in
            if case .schema(let recorded, _) = record { versions.append(recorded.versionIdentifier) }
        }
        #expect(versions == ["1", version], "the later schema frame is in the log")
    }

    static func setRank(_ rank: Int64, ofItem index: Int, at path: String, model: ObjectModel) throws {
        let container = try ModelContainer(path: path, model: model)
        let context = container.newBackgroundContext()
        let descriptor = FetchDescriptor<ManagedObject>(
            entityName: "IndexedItem", filter: .equal("handle", .string(StoredCheckpointIndexTests.identity(index))))
        let item = try #require(try context.fetch(descriptor).first)
        item.setValue(.attribute(.int64(rank)), forKey: "rank")
        try context.save()
        try container.close()
    }

    static func handles(rank: Int64, in container: ModelContainer) throws -> Set<ObjectValue> {
        let descriptor = FetchDescriptor<ManagedObject>(entityName: "IndexedItem", filter: .equal("rank", .int64(rank)))
        return Set(try container.newBackgroundContext().fetch(descriptor).map { $0.value(forKey: "handle") })
    }

    /// The handles of rank 50: items 5,000 ... 5,099 (all in entity chunk 1) but 5,001, and item 5 (chunk 0).
    static let rank50 = Set(
        ([5] + (5_000..<5_100).filter { $0 != 5_001 }).map {
            ObjectValue.attribute(.string(StoredCheckpointIndexTests.identity($0)))
        })

    @Test func anEntityWhoseIndexesDidNotChangeKeepsItsStoredIndexes() throws {
        let directory = TemporaryDirectory()
        try Self.storeWithALaterSchemaFrame(at: directory.file(), version: "2")
        let container = try ModelContainer(path: directory.file())
        defer { try? container.close() }
        let state = StoredCheckpointIndexTests.state(of: container)
        #expect(container.model.versionIdentifier == "2")
        #expect(state.storedAttributeIndexes[StoredCheckpointIndexTests.itemEntity]?.count == 2)
        let items = state.version(ofEntity: StoredCheckpointIndexTests.itemEntity)
        // The tail's two transactions read chunks 0 and 1 when they were replayed; chunk 2 holds no object of
        // rank 50 or 0.
        #expect(items.unreadChunkCount == 1)

        #expect(try Self.handles(rank: 50, in: container) == Self.rank50)
        // The stored rank index, with the tail's changes on top, found the objects: chunk 2 was not read.
        #expect(items.unreadChunkCount == 1)
        #expect(
            try Self.handles(rank: 0, in: container).contains(
                .attribute(.string(StoredCheckpointIndexTests.identity(5_001)))))
        #expect(!StoredCheckpointIndexTests.state(of: container).pendingAttributeIndexEntities.contains(0))
    }

    @Test func anEntityWhoseIndexesChangedBuildsThemFromItsChunks() throws {
        let directory = TemporaryDirectory()
        // The later frame indexes `note` as well: the stored indexes do not cover it.
        try Self.storeWithALaterSchemaFrame(
            at: directory.file(), version: "2", indexes: [["handle"], ["rank"], ["note"]])
        let container = try ModelContainer(path: directory.file())
        defer { try? container.close() }
        let state = StoredCheckpointIndexTests.state(of: container)
        #expect(state.storedAttributeIndexes.isEmpty)
        let items = state.version(ofEntity: StoredCheckpointIndexTests.itemEntity)
        #expect(try Self.handles(rank: 50, in: container) == Self.rank50)
        #expect(items.unreadChunkCount == 0)
        let indexed = StoredCheckpointIndexTests.state(of: container).indexes[StoredCheckpointIndexTests.itemEntity]
        #expect(indexed.map(\.propertyIndex).count == 3)
    }
}
