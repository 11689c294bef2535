import Foundation
import LogFormat
import Testing

@testable import EventGraph

@Suite("A lookup by ID starts loading the property the last looked-up object's first read was")
struct LookupReadPrefetchTests {
    private static func saveSamples(_ count: Int, in container: ModelContainer) throws -> [ObjectID] {
        let setup = container.newBackgroundContext()
        let made = (0..<count).map { index in
            let sample = Sample()
            setup.insert(sample)
            sample.string = "sample \(index)"
            sample.int64 = Int64(index)
            sample.uuid = UUID(uuidString: "00000000-0000-0000-0000-\(String(format: "%012d", index))")!
            sample.data = Data([UInt8(index & 0xFF), 1, 2])
            return sample
        }
        try setup.save()
        return made.map(\.objectID)
    }

    private static func index(of name: String) throws -> Int {
        try #require(TestModels.samples.entity(named: "Sample")?.attribute(named: name)?.index)
    }

    @Test("the first read of a looked-up fault notes its property once; later reads and other objects' do not")
    func firstReadOfALookedUpFaultIsNoted() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        let ids = try Self.saveSamples(3, in: container)
        let context = container.newBackgroundContext()
        #expect(context.lookupReadProperty.entityIndex == -1)

        let first = try #require(context.object(with: ids[0]) as? Sample)
        #expect(first.flags.contains(.isLookedUpByID))
        #expect(first.int64 == 0)
        #expect(!first.flags.contains(.isLookedUpByID) && !first.isFault)
        #expect(context.lookupReadProperty == (first.entity.index, try Self.index(of: "int64")))
        // A later read of the same object is no first read.
        #expect(first.string == "sample 0")
        #expect(context.lookupReadProperty.property == (try Self.index(of: "int64")))

        // The next lookup's first read is another property: the note follows it.
        let second = try #require(context.object(with: ids[1]) as? Sample)
        #expect(second.string == "sample 1")
        #expect(context.lookupReadProperty.property == (try Self.index(of: "string")))
    }

    @Test("objects a fetch makes never note their reads")
    func fetchedObjectsDoNotNote() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        _ = try Self.saveSamples(5, in: container)
        let context = container.newBackgroundContext()
        let fetched = try context.fetch(FetchDescriptor<Sample>())
        #expect(fetched.map(\.int64).sorted() == [0, 1, 2, 3, 4])
        #expect(fetched.allSatisfy { !$0.flags.contains(.isLookedUpByID) })
        #expect(context.lookupReadProperty.entityIndex == -1)
    }

    @Test(
        "values read right whichever property the lookups expect",
        arguments: ["int16", "int64", "double", "bool", "string", "date", "uuid", "url", "decimal", "data", "point"])
    func valuesReadRightWhateverIsExpected(expected name: String) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        let ids = try Self.saveSamples(40, in: container)
        let context = container.newBackgroundContext()
        let sampleEntity = try #require(container.model.entity(named: "Sample"))
        let expected = try Self.index(of: name)
        // The first lookup's first read is the expected property (through the dynamic API, by name).
        let first = try #require(context.object(with: ids[0]))
        _ = first.value(forKey: name)
        #expect(context.lookupReadProperty == (sampleEntity.index, expected))

        // Every later lookup, new or registered already, reads every value right, whichever it reads first.
        for (position, id) in (ids + ids.reversed()).enumerated() {
            let sample = try #require(context.object(with: id) as? Sample)
            let number = ids.firstIndex(of: id)!
            if position.isMultiple(of: 2) {
                #expect(sample.string == "sample \(number)")
                #expect(sample.int64 == Int64(number))
            } else {
                #expect(sample.data == Data([UInt8(number & 0xFF), 1, 2]))
                #expect(sample.uuid.uuidString.hasSuffix(String(format: "%012d", number)))
            }
            #expect(sample.point == nil && sample.optionalString == nil)
        }
    }

    @Test("a looked-up object with unsaved changes, and a deleted one, read as before")
    func pendingChangesAndDeletes() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        let ids = try Self.saveSamples(4, in: container)
        let context = container.newBackgroundContext()
        let changed = try #require(context.object(with: ids[0]) as? Sample)
        changed.string = "changed"
        // Looked up again: the registered object, with its unsaved value, whatever the prefetch loaded.
        #expect((context.object(with: ids[0]) as? Sample)?.string == "changed")
        #expect(context.object(with: ids[0]) === changed)

        let deleted = try #require(context.object(with: ids[1]))
        context.delete(deleted)
        try context.save()
        #expect(context.object(with: ids[1]) == nil)
        #expect((context.object(with: ids[2]) as? Sample)?.string == "sample 2")
    }

    @Test(
        "a store's lookup finds the same row whatever property it is asked to prefetch",
        arguments: [-1, 0, 6, 17, 1_000])
    func storeLookupPrefetching(property: Int) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        let ids = try Self.saveSamples(3, in: container)
        let entityIndex = try #require(container.model.entity(named: "Sample")).index
        var cache = EntityVersionCache()
        for (number, id) in ids.enumerated() {
            let identity = ObjectIdentity(storeIndex: 0, key: id.key)
            let row = try #require(
                container.store.committedRow(
                    of: identity, entityIndex: entityIndex, cache: &cache, prefetchingProperty: property))
            #expect(row.key == id.key)
            #expect(row.values.attributeValue(at: try Self.index(of: "int64")) == .int64(Int64(number)))
        }
        let missing = ObjectIdentity(storeIndex: 0, key: 1_000_000)
        #expect(
            container.store.committedRow(
                of: missing, entityIndex: entityIndex, cache: &cache, prefetchingProperty: property) == nil)
    }

    @Test("a prefetch past a column's slots or a slot's properties is harmless")
    func prefetchPastTheEnd() throws {
        let empty: [UInt32] = []
        empty.prefetchElement(at: 0)
        empty.prefetchElement(at: -1)
        [UInt8(1), 2].prefetchElement(at: 2)

        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        let ids = try Self.saveSamples(1, in: container)
        let context = container.newBackgroundContext()
        let sample = try #require(context.object(with: ids[0]))
        let columns = try #require(sample.committedColumns)
        columns.prefetchValue(at: -1)
        columns.prefetchValue(at: Int(columns.readableCount))
        columns.prefetchValue(at: Int.max)
        #expect((sample as? Sample)?.string == "sample 0")
    }
}
