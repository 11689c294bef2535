import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// A fetched object reads its slot's columns in place (``ManagedObject/committedColumns``), without copying the
/// slot out of the object for each read; the values are the slot's, whatever happens to the object or the store.
@Suite("Objects read their slot's columns in place")
struct InPlaceSlotReadTests {
    /// Every attribute of a `Sample` as the slot reads it and as a property read does.
    private static func expectReadsAgree(_ sample: Sample) throws {
        let committed = try #require(sample.committed)
        for index in sample.entity.properties.indices {
            #expect(sample.storedAttributeValue(at: index) == committed.attributeValueUnlessRelationship(at: index))
        }
    }

    /// Saves samples 0 ..< `count`, numbered by `int64`, with `string` made by `text`; every third with an optional
    /// string.
    private static func saveSamples(_ count: Int, into container: ModelContainer, text: (Int) -> String) throws {
        let writer = container.newBackgroundContext()
        for index in 0..<count {
            let sample = Sample()
            writer.insert(sample)
            sample.int64 = Int64(index)
            sample.string = text(index)
            if index % 3 == 0 { sample.optionalString = "present \(index)" }
        }
        try writer.save()
    }

    @Test("a fetched object holds its slot's columns; every read agrees with the slot's, and set with it")
    func heldColumnsFollowTheCommittedValues() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        try Self.saveSamples(300, into: container) { "sample \($0), a title longer than fifteen bytes" }
        let context = container.newBackgroundContext()
        let fetched = try context.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.int64)]))
        #expect(fetched.count == 300)
        #expect(fetched.allSatisfy { $0.committedColumns != nil })
        for sample in fetched { try Self.expectReadsAgree(sample) }
        #expect(fetched[7].string == "sample 7, a title longer than fifteen bytes" && !fetched[7].isFault)
        #expect(fetched[9].optionalString == "present 9" && fetched[10].optionalString == nil)

        // A Row made for the object (a save's read set needs one) takes the place of the slot: read through it.
        let withRow = fetched[11]
        _ = withRow.row
        #expect(withRow.committedColumns == nil)
        #expect(withRow.int64 == 11 && withRow.string == "sample 11, a title longer than fifteen bytes")

        // A refreshed object holds nothing until it fires; then a slot again.
        let refreshed = fetched[12]
        context.refresh(refreshed)
        #expect(refreshed.committed == nil && refreshed.committedColumns == nil)
        #expect(refreshed.int64 == 12 && refreshed.committedColumns != nil)

        // An unsaved value wins over the slot's.
        fetched[13].string = "changed"
        #expect(fetched[13].string == "changed")
        context.rollback()
        #expect(fetched[13].string == "sample 13, a title longer than fifteen bytes")
    }

    @Test("an object keeps reading its version in place while commits rewrite its chunk")
    func inPlaceReadsKeepTheirVersion() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        try Self.saveSamples(50, into: container) { "first \($0), long enough to live in the arena" }
        let writer = container.newBackgroundContext()
        let reader = container.newBackgroundContext()
        let fetched = try reader.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.int64)]))
        let all = try writer.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.int64)]))
        for round in 1...20 {
            for sample in all { sample.string = "round \(round) \(sample.int64), long enough to live in the arena" }
            try writer.save()
        }
        #expect(fetched.allSatisfy { $0.committedColumns != nil })
        for sample in fetched {
            #expect(sample.string == "first \(sample.int64), long enough to live in the arena")
            try Self.expectReadsAgree(sample)
        }
    }

    @Test("an object of a checkpoint chunk reads through its context's cache, or the chunk's box without a context")
    func checkpointSlotsAreNotReadInPlace() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let writing = try ModelContainer(path: path, model: TestModels.samples)
        try Self.saveSamples(100, into: writing) { "checkpointed \($0), long enough to live in the arena" }
        _ = try writing.compact()
        try writing.close()
        let container = try ModelContainer(path: path, model: TestModels.samples)
        var context: ObjectContext? = container.newBackgroundContext()
        let fetched = try #require(context).fetch(FetchDescriptor<Sample>())
        #expect(fetched.count == 100)
        for withContext in [true, false] {
            for sample in fetched {
                guard case .slot(let slot, _)? = sample.committed, let columns = sample.committedColumns else {
                    Issue.record("a fetched object holds a slot")
                    continue
                }
                // The slot's box, not its columns: they are read through the context's cache (see
                // `CheckpointColumnsCache`), or through the box once the context is gone.
                #expect(slot.readsThroughCheckpointChunk && columns.readsThroughCheckpointChunk && columns.base == nil)
                let box = try #require(slot.checkpointChunk)
                #expect(columns.checkpointChunkAddress == UnsafeRawPointer(Unmanaged.passUnretained(box).toOpaque()))
                #expect((sample.contextStorage != nil) == withContext)
                #expect(sample.string == "checkpointed \(sample.int64), long enough to live in the arena")
                try Self.expectReadsAgree(sample)
            }
            // The context goes: its objects leave it and read through their slots' boxes.
            context = nil
        }
        try container.close()
    }
}
