import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A second indexed entity beside ``IndexedItem``, so that one entity can change while the other does not.
final class IndexedLabel: ManagedObject {
    @Attribute(.unique) var label: String = ""
    @Attribute(.indexed) var weight: Int64 = 0
}

/// A compaction copies the stored indexes of an entity that no commit changed since the last checkpoint as the file
/// stores them (their chunks read again and verified), instead of building them from the objects; an index of an
/// entity that changed is built, and a stored chunk that does not verify makes its index built too.
@Suite("Stored indexes copied by a compaction")
struct IndexChunkCopyTests {
    static let model = try! ObjectModel(name: "TwoIndexed", version: "1", types: [IndexedItem.self, IndexedLabel.self])
    static let items = model.entity(named: "IndexedItem")!.index
    static let labels = model.entity(named: "IndexedLabel")!.index

    /// A compacted store of 9,000 items (as ``StoredCheckpointIndexTests/compactedStore(at:count:)``) and 3,000 labels
    /// ("label-N", weight N / 10).
    static func compactedStore(at path: String) throws {
        let container = try ModelContainer(path: path, model: model)
        let context = container.newBackgroundContext()
        StoredCheckpointIndexTests.insertItems(9_000, into: context)
        for index in 0..<3_000 {
            let label = IndexedLabel()
            context.insert(label)
            label.label = "label-\(index)"
            label.weight = Int64(index / 10)
        }
        try context.save()
        _ = try container.compact()
        try container.close()
    }

    /// How many index chunks the file's checkpoint lists for `entity`.
    static func indexChunkCount(of path: String, entity: Int) throws -> Int {
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        return listed.indexes.filter { $0.entityIndex == UInt32(entity) }.reduce(0) { $0 + $1.chunks.count }
    }

    /// Every stored index's entries, by (entity, kind, ordinal), as the file's checkpoint holds them.
    static func storedEntries(of path: String) throws -> [String: [CheckpointIndexEntry]] {
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let reader = try LogReader(path: path)
        var checkpoint: UInt64 = 0
        try reader.scan { record in
            if case .checkpointBegin(let begin, _) = record { checkpoint = begin.lastTransactionID }
        }
        var result: [String: [CheckpointIndexEntry]] = [:]
        for index in listed.indexes {
            var entries: [CheckpointIndexEntry] = []
            for entry in index.chunks {
                entries += try reader.readIndexChunk(
                    entry, arity: Int(index.arity), checkpointTransactionID: checkpoint
                ).entries
            }
            result["\(index.entityIndex) \(index.kind) \(index.ordinal)"] = entries
        }
        return result
    }

    static func fetch(label: String, in context: ObjectContext) throws -> [Int64] {
        try context.fetch(FetchDescriptor<IndexedLabel>(filter: .equal("label", .string(label)))).map(\.weight)
    }

    static func fetch(weight: Int64, in context: ObjectContext) throws -> Set<String> {
        Set(try context.fetch(FetchDescriptor<IndexedLabel>(filter: .equal("weight", .int64(weight)))).map(\.label))
    }

    /// Changes the weight of label `index` to `weight` in its own save.
    static func setWeight(of index: Int, to weight: Int64, in container: ModelContainer) throws {
        let context = container.newBackgroundContext()
        let label = try #require(
            try context.fetch(
                FetchDescriptor<IndexedLabel>(filter: .equal("label", .string("label-\(index)")))
            ).first)
        label.weight = weight
        try context.save()
    }

    @Test func theIndexesOfAnUnchangedEntityAreCopiedAndEqualWhatABuildWrites() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try Self.compactedStore(at: path)
        let itemChunks = try Self.indexChunkCount(of: path, entity: Self.items)
        let before = try Self.storedEntries(of: path)
        #expect(itemChunks >= 2)
        let report: CompactionReport
        do {
            let container = try ModelContainer(path: path, model: Self.model)
            defer { try? container.close() }
            // Only a label changes: the items' uniqueness and rank indexes are copied, the labels' are built.
            try Self.setWeight(of: 7, to: 999, in: container)
            report = try container.compact()
        }
        #expect(report.copiedIndexChunkCount == itemChunks)
        let after = try Self.storedEntries(of: path)
        for (name, entries) in before where name.hasPrefix("\(Self.items) ") {
            #expect(after[name] == entries, "\(name)")
        }
        #expect(after != before)
        #expect(try StoredCheckpointIndexTests.storedIndexIssues(of: path).isEmpty)
        let reopened = try ModelContainer(path: path, model: Self.model)
        defer { try? reopened.close() }
        let context = reopened.newBackgroundContext()
        #expect(
            try StoredCheckpointIndexTests.fetch(identity: StoredCheckpointIndexTests.identity(4_321), in: context)
                .map(\.rank) == [43])
        #expect(try StoredCheckpointIndexTests.fetch(rank: 12, in: context).count == 100)
        #expect(try Self.fetch(label: "label-7", in: context) == [999])
        #expect(try Self.fetch(weight: 999, in: context) == ["label-7"])
        #expect(try Self.fetch(weight: 0, in: context) == Set((0..<10).filter { $0 != 7 }.map { "label-\($0)" }))
    }

    @Test func theIndexesOfAChangedEntityAreBuiltFromItsObjects() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try Self.compactedStore(at: path)
        let itemChunks = try Self.indexChunkCount(of: path, entity: Self.items)
        do {
            let container = try ModelContainer(path: path, model: Self.model)
            defer { try? container.close() }
            // Both entities change: a label's indexed weight, an item's indexed rank, another item is deleted.
            try Self.setWeight(of: 2_000, to: -5, in: container)
            let context = container.newBackgroundContext()
            let items = try context.fetch(FetchDescriptor<IndexedItem>(filter: .compare("rank", .less, .int64(1))))
            items.first { $0.handle == StoredCheckpointIndexTests.identity(3) }!.rank = 500
            context.delete(items.first { $0.handle == StoredCheckpointIndexTests.identity(4) }!)
            try context.save()
            let report = try container.compact()
            #expect(report.copiedIndexChunkCount == 0)
            // Compacted again without a change: the state still reads the first checkpoint's chunks, and both
            // entities changed since it, so both are built again, to the same entries.
            let before = try Self.storedEntries(of: path)
            #expect(try container.compact().copiedIndexChunkCount == 0)
            #expect(try Self.storedEntries(of: path) == before)
        }
        #expect(try StoredCheckpointIndexTests.storedIndexIssues(of: path).isEmpty)
        let reopened = try ModelContainer(path: path, model: Self.model)
        defer { try? reopened.close() }
        let context = reopened.newBackgroundContext()
        #expect(
            try StoredCheckpointIndexTests.fetch(rank: 500, in: context) == [StoredCheckpointIndexTests.identity(3)])
        #expect(try StoredCheckpointIndexTests.fetch(rank: 0, in: context).count == 98)
        #expect(
            try StoredCheckpointIndexTests.fetch(identity: StoredCheckpointIndexTests.identity(4), in: context)
                .isEmpty)
        #expect(try Self.fetch(weight: -5, in: context) == ["label-2000"])
        // Reopened on the new file, nothing changed since its checkpoint: every index is copied.
        let again = try reopened.compact()
        #expect(
            again.copiedIndexChunkCount == (try Self.indexChunkCount(of: path, entity: Self.items))
                + (try Self.indexChunkCount(of: path, entity: Self.labels)))
        #expect(itemChunks > 0)
    }

    @Test func aStoredIndexChunkThatDoesNotVerifyMakesItsIndexBuilt() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try Self.compactedStore(at: path)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let itemIndexes = listed.indexes.filter { $0.entityIndex == UInt32(Self.items) }
        let damaged = try #require(itemIndexes.first { $0.kind == .unique })
        let before = try Self.storedEntries(of: path)
        // One byte inside the body of the items' uniqueness index's first chunk.
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        file.seek(toFileOffset: damaged.chunks[0].byteOffset + 64)
        let byte = file.readData(ofLength: 1)
        file.seek(toFileOffset: damaged.chunks[0].byteOffset + 64)
        file.write(Data([byte[0] ^ 0x5A]))
        try file.close()
        do {
            let container = try ModelContainer(path: path, model: Self.model)
            defer { try? container.close() }
            try Self.setWeight(of: 1, to: 3, in: container)
            let report = try container.compact()
            // The rank index is copied; the damaged uniqueness index is built from the items, as it was before.
            let rankChunks = itemIndexes.filter { $0.kind == .attribute }.reduce(0) { $0 + $1.chunks.count }
            #expect(report.copiedIndexChunkCount == rankChunks)
        }
        let uniqueName = "\(Self.items) \(damaged.kind) \(damaged.ordinal)"
        #expect(try Self.storedEntries(of: path)[uniqueName] == before[uniqueName])
        #expect(try StoredCheckpointIndexTests.storedIndexIssues(of: path).isEmpty)
    }
}
