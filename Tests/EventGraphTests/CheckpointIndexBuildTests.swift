import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// The entries a compaction stores for an index (`StoreState.checkpointIndexChunks(model:entities:)`), built flat (a
/// key array and a value array): in the index's order whatever the keys' order, and cut into chunks of at most
/// ``LogLimits/maxIndexChunkEntryCount`` entries and ``StoreState/indexChunkByteBudget`` estimated bytes.
@Suite("A compaction's stored index entries")
struct CheckpointIndexBuildTests {
    @Test func entriesOutOfKeyOrderAreSortedAndCutByCountAndByBytes() throws {
        let directory = TemporaryDirectory()
        let model = StoredCheckpointIndexTests.model
        let container = try ModelContainer(path: directory.file(), model: model)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let count = 9_000
        for index in 0..<count {
            let item = IndexedItem()
            context.insert(item)
            // Unique, of varied length, and not in key order; ranks repeat and fall as keys grow.
            item.handle = String(repeating: "h", count: (index * 31) % 97) + "-\(index)"
            item.rank = Int64((count - index) % 37)
        }
        try context.save()
        let state = StoredCheckpointIndexTests.state(of: container)
        let built = state.checkpointIndexChunks(model: model, entities: [StoredCheckpointIndexTests.itemEntity])
        #expect(built.map(\.0.kind) == [.unique, .attribute, .attribute])
        for (index, chunks) in built {
            // The uniqueness constraint is the handle's (property 0); an attribute index's ordinal is its property.
            let property = index.kind == .unique ? 0 : Int(index.ordinal)
            var reference: [CheckpointIndexEntry] = []
            state.tables[StoredCheckpointIndexTests.itemEntity].forEachLiveSlot { chunk, position, _ in
                reference.append(
                    CheckpointIndexEntry(
                        values: [chunk.attributeValue(at: position, property: property)], key: chunk.keys[position]))
            }
            reference.sort(by: CheckpointIndex.precedes)
            #expect(chunks.flatMap(\.entries) == reference, "\(index.kind) \(property)")
            #expect(chunks.allSatisfy { $0.arity == 1 && $0.values.count == $0.keys.count })
            // Each chunk as full as the limits allow: the next entry would pass one of them.
            let sizes = chunks.map { $0.entries.map(Self.estimatedByteCount) }
            for (position, chunk) in sizes.enumerated() {
                #expect(chunk.count <= LogLimits.maxIndexChunkEntryCount)
                #expect(chunk.reduce(0, +) <= StoreState.indexChunkByteBudget)
                guard position + 1 < sizes.count else { continue }
                #expect(
                    chunk.count == LogLimits.maxIndexChunkEntryCount
                        || chunk.reduce(0, +) + sizes[position + 1][0] > StoreState.indexChunkByteBudget)
            }
        }
        // The ranks are cut by count; the handles (≈ 75 estimated bytes each, fewer for the short ones that sort
        // first) by bytes too.
        #expect(built[2].1.map(\.entryCount) == [4_096, 4_096, 808])
        #expect(built[0].1.count >= 3 && built[0].1.dropLast().contains { $0.entryCount < 4_096 })
    }

    /// The estimate `StoreState` cuts by: 10 bytes of key and framing, and each value's bound.
    static func estimatedByteCount(_ entry: CheckpointIndexEntry) -> Int {
        entry.values.reduce(10) { total, value in
            if case .string(let text) = value { return total + 11 + text.utf8.count }
            return total + 18
        }
    }
}
