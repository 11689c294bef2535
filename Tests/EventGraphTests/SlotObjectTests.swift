import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// Whether an object holds a chunk slot (no ``Row`` made for it).
private func holdsSlot(_ object: ManagedObject) -> Bool {
    if case .slot? = object.committed { return true }
    return false
}

/// Saves `count` samples numbered by `int64`, with a string that names the number.
private func insertSamples(_ count: Int, into container: ModelContainer) throws {
    let context = container.newBackgroundContext()
    for index in 0..<count {
        let sample = Sample()
        context.insert(sample)
        sample.int64 = Int64(index)
        sample.string = "sample \(index), a title longer than fifteen bytes"
    }
    try context.save()
}

@Suite("Fetched objects hold their chunk slot, not a Row")
struct SlotObjectTests {
    @Test("a fetched object that is never changed never makes a Row, also after every property is read")
    func unchangedObjectsMakeNoRow() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        try insertSamples(5_000, into: container)
        let context = container.newBackgroundContext()
        let fetched = try context.fetch(FetchDescriptor<Sample>())
        #expect(fetched.count == 5_000)
        #expect(fetched.allSatisfy(holdsSlot))
        for (index, sample) in fetched.enumerated() {
            #expect(sample.int64 == Int64(index))
            #expect(sample.string == "sample \(index), a title longer than fifteen bytes")
            _ = (sample.int16, sample.double, sample.date, sample.uuid, sample.url, sample.optionalString)
        }
        #expect(fetched.allSatisfy(holdsSlot), "reading values makes no Row")
        // A second fetch brings the same objects up to date without a Row either.
        let again = try context.fetch(FetchDescriptor<Sample>(filter: .compare("int64", .greater, .int64(2_500))))
        #expect(again.count == 2_499)
        #expect(again.allSatisfy { holdsSlot($0) && $0 === fetched[Int($0.int64)] })
        try container.close()
    }

    @Test("lookups by ID, indexed and filtered fetches and fired faults hold slots")
    func everyReadPathHoldsSlots() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        try insertSamples(100, into: container)
        let ids = try container.newBackgroundContext().fetch(FetchDescriptor<Sample>()).map(\.objectID)
        let context = container.newBackgroundContext()
        let looked = try #require(context.object(with: ids[7]) as? Sample)
        #expect(holdsSlot(looked) && looked.int64 == 7)
        let filtered = try context.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(42))))
        #expect(filtered.count == 1 && holdsSlot(filtered[0]) && filtered[0].int64 == 42)
        // A refreshed object fires from the store again: a slot.
        context.refresh(looked)
        #expect(looked.isFault)
        #expect(looked.int64 == 7 && holdsSlot(looked))
        try container.close()
    }

    @Test("an object changed after its fetch saves; a conflicting save is still detected from its slot's version")
    func changedObjectsSaveAndConflict() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        try insertSamples(10, into: container)
        let reader = container.newBackgroundContext()
        let mine = try #require(try reader.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(3)))).first)
        #expect(holdsSlot(mine))
        let writer = container.newBackgroundContext()
        let theirs = try #require(try writer.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(3)))).first)
        theirs.string = "theirs"
        try writer.save()
        mine.string = "mine"
        #expect(mine.string == "mine" && mine.int64 == 3)
        #expect(throws: EventGraphError.self, "the save sees that the object changed since its slot was read") {
            try reader.save()
        }
        reader.rollback()
        reader.refresh(mine)
        #expect(mine.string == "theirs")
        mine.string = "mine again"
        try reader.save()
        let check = container.newBackgroundContext()
        let saved = try #require(try check.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(3)))).first)
        #expect(saved.string == "mine again")
        try container.close()
    }

    @Test("a reader holding an old version keeps reading it while many commits install; a refetch sees the last")
    func readerKeepsItsVersionAcrossCommits() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        try insertSamples(4_200, into: container)  // more than one chunk
        let reader = container.newBackgroundContext()
        let fetched = try reader.fetch(FetchDescriptor<Sample>())
        let writer = container.newBackgroundContext()
        let all = try writer.fetch(FetchDescriptor<Sample>())
        for round in 1...30 {
            for sample in all where sample.int64 % 7 == Int64(round % 7) { sample.int32 = Int32(round) }
            all[round].string = "round \(round)"
            try writer.save()
        }
        #expect(fetched.allSatisfy(holdsSlot))
        for (index, sample) in fetched.enumerated() {
            #expect(sample.int32 == 0)
            #expect(sample.string == "sample \(index), a title longer than fifteen bytes")
        }
        let refetched = try reader.fetch(FetchDescriptor<Sample>())
        #expect(refetched.count == fetched.count && zip(refetched, fetched).allSatisfy { $0 === $1 })
        #expect(fetched[5].string == "round 5" && fetched[5].int32 != 0)
        #expect(fetched.allSatisfy(holdsSlot))
        try container.close()
    }

    @Test("merging another context's save replaces a held slot with the new values")
    func mergesReplaceSlots() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        try insertSamples(20, into: container)
        let merging = container.newBackgroundContext()
        merging.automaticallyMergesChangesFromParent = true
        let fetched = try merging.fetch(FetchDescriptor<Sample>())
        #expect(fetched[4].string.hasPrefix("sample 4"))
        let other = container.newBackgroundContext()
        let changed = try #require(try other.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(4)))).first)
        changed.string = "merged"
        try other.save()
        merging.processPendingChanges()
        #expect(fetched[4].string == "merged")
        #expect(fetched[5].string.hasPrefix("sample 5") && holdsSlot(fetched[5]))
    }

    @Test("a child context reads slots through an unchanged parent, and its parent's unsaved values over them")
    func childContextsReadThroughTheirParent() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        try insertSamples(50, into: container)
        let parent = container.newBackgroundContext()
        let child = parent.makeChildContext()
        let first = try child.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.int64)]))
        #expect(first.count == 50 && first.allSatisfy(holdsSlot))
        let inParent = try #require(try parent.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(9)))).first)
        inParent.string = "the parent's"
        let second = try child.makeChildContext().fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.int64)]))
        #expect(second[9].string == "the parent's")
        #expect(second[10].string.hasPrefix("sample 10"))
        first[11].string = "the child's"
        try child.save()
        #expect(try #require(parent.object(with: first[11].objectID) as? Sample).string == "the child's")
        try parent.save()
        let check = container.newBackgroundContext()
        let saved = try check.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.int64)]))
        #expect(saved[9].string == "the parent's" && saved[11].string == "the child's")
    }
}
