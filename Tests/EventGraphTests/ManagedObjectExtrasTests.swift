import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// The rarely used fields of an object live in a side record made on first use (``ManagedObject/Extras``): a fetched
/// object that is only read never makes one, and the fields behave as before when it is made.
@Suite("Objects keep their rarely used fields in a side record made on first use")
struct ManagedObjectExtrasTests {
    @Test(
        "fetching and reading every attribute makes no side record; loading an external value does, refresh empties it")
    func sideRecordOnlyWhenUsed() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        let writer = container.newBackgroundContext()
        for index in 0..<20 {
            let sample = Sample()
            writer.insert(sample)
            sample.string = "sample \(index)"
            sample.large = Data(repeating: UInt8(index), count: 200)
        }
        try writer.save()

        let context = container.newBackgroundContext()
        let samples = try context.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.string)]))
        #expect(samples.count == 20)
        for sample in samples {
            _ = (sample.int16, sample.string, sample.date, sample.uuid, sample.url, sample.optionalString)
            _ = sample.objectID
        }
        #expect(samples.allSatisfy { $0.extras == nil })

        let first = samples[0]
        #expect(first.large == Data(repeating: 0, count: 200))
        #expect(first.extras != nil)
        #expect(first.isExternalValueLoaded(at: first.entity.attribute(named: "large")!.index))
        context.refresh(first)
        #expect(!first.isExternalValueLoaded(at: first.entity.attribute(named: "large")!.index))
        #expect(first.large == Data(repeating: 0, count: 200))
        #expect(samples[1].extras == nil)
    }

    @Test("a released context's objects get their detachment without a side record")
    func detachmentOfObjectsKeptAfterTheirContext() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        var kept: Sample?
        let id: ObjectID
        do {
            let context = container.newBackgroundContext()
            let sample = Sample()
            context.insert(sample)
            sample.string = "kept"
            try context.save()
            id = sample.objectID
            kept = try context.fetch(FetchDescriptor<Sample>()).first
        }
        let sample = try #require(kept)
        #expect(sample.context == nil)
        #expect(sample.detachment?.reason == .released)
        #expect(sample.extras == nil)
        #expect(sample.objectID == id)
        #expect(sample.string == "kept")
    }
}
