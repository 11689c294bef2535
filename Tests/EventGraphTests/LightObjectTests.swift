import Foundation
import LogFormat
import Synchronization
import TestSupport
import Testing

@testable import EventGraph

/// `@Attribute` and `@Relationship` store no metadata per instance (see `PrototypeCapture`): the model learns it
/// from prototypes, and an object reads its defaults from the model.
@Suite("Property wrappers store nothing per instance")
struct LightObjectTests {
    final class Declared: ManagedObject {
        @Attribute(.indexed, .length(1...)) var title: String = "untitled"
        @Attribute(.unique) var number: Int64 = 7
        @Attribute var note: String?
        @Attribute(.transient) var scratch: String = "scratch"
        @Relationship(inverse: "declared", deleteRule: .cascade, maximumCount: 3) var parts: Set<Part>
        @Relationship var owner: Part?
    }

    final class Part: ManagedObject {
        @Attribute var name: String = ""
        @Relationship(inverse: "parts") var declared: Declared?
    }

    /// A subclass's wrappers are initialized before its superclass's, the reverse of the order the model lists them:
    /// each must still get its own default and options.
    class Base: ManagedObject {
        @Attribute(.indexed) var first: String = "first"
        @Attribute var second: String = "second"
    }

    final class Derived: Base {
        @Attribute(.unique) var third: Int64 = 3
        @Attribute var fourth: String = "fourth"
    }

    final class Stamped: ManagedObject {
        @Attribute var created = Date()
        @Attribute var token = UUID()
        @Attribute var label: String = "stamped"
    }

    @Test("a wrapper is at most two bytes; a fetched object is small")
    func wrappersHoldNoMetadata() {
        #expect(MemoryLayout<Attribute<String>>.size <= 2)
        #expect(MemoryLayout<Attribute<Date?>>.size <= 2)
        #expect(MemoryLayout<Relationship<Set<Part>>>.size <= 2)
        #expect(MemoryLayout<Relationship<Part?>>.size <= 2)
    }

    @Test("defaults, options, inverses, delete rules and counts reach the model from the prototypes")
    func metadataReachesTheModel() throws {
        let model = try ObjectModel(types: [Declared.self, Part.self, Base.self, Derived.self])
        let entity = try #require(model.entity(for: Declared.self))
        let title = try #require(entity.attribute(named: "title"))
        #expect(title.isIndexed && title.minimumLength == 1 && title.defaultValue == .string("untitled"))
        let number = try #require(entity.attribute(named: "number"))
        #expect(number.isUnique && number.defaultValue == .int64(7))
        #expect(try #require(entity.attribute(named: "note")).isOptional)
        #expect(try #require(entity.attribute(named: "scratch")).isTransient)
        let parts = try #require(entity.relationship(named: "parts"))
        #expect(parts.inverseName == "declared" && parts.deleteRule == .cascade && parts.maximumCount == 3)
        #expect(try #require(entity.relationship(named: "owner")).inverseName == nil)

        let derived = try #require(model.entity(for: Derived.self))
        #expect(derived.properties.map(\.name) == ["first", "second", "third", "fourth"])
        let first = try #require(derived.attribute(named: "first"))
        #expect(first.isIndexed && !first.isUnique && first.defaultValue == .string("first"))
        #expect(try #require(derived.attribute(named: "second")).defaultValue == .string("second"))
        let third = try #require(derived.attribute(named: "third"))
        #expect(third.isUnique && third.defaultValue == .int64(3))
        #expect(try #require(derived.attribute(named: "fourth")).defaultValue == .string("fourth"))
    }

    /// How many times ``Counted``'s initial values and options were evaluated.
    static let evaluations = Atomic<Int>(0)

    static func counted<Value>(_ value: Value) -> Value {
        evaluations.add(1, ordering: .relaxed)
        return value
    }

    final class Counted: ManagedObject {
        @Attribute var number: Int64 = LightObjectTests.counted(7)
        @Attribute(LightObjectTests.counted(.indexed)) var name: String = LightObjectTests.counted("n")
        @Attribute(.length(1...), LightObjectTests.counted(.unique), .indexed) var code: String = "c"
        @Attribute(LightObjectTests.counted(.indexed)) var note: String?
        @Attribute(.indexed, LightObjectTests.counted(.unique)) var tag: String?
    }

    /// The model evaluates each initial value and option once, when it builds the prototype; an object made
    /// afterwards evaluates none (before, each object ran every expression: a default like `URL(string: "…")!`
    /// parsed its text, and each option was built and destroyed, for every object a fetch made).
    @Test("an object evaluates neither its attributes' initial values nor their options")
    func objectsDoNotEvaluateTheDeclarations() throws {
        let model = try ObjectModel(types: [Counted.self])
        let entity = try #require(model.entity(for: Counted.self))
        #expect(try #require(entity.attribute(named: "number")).defaultValue == .int64(7))
        let name = try #require(entity.attribute(named: "name"))
        #expect(name.isIndexed && name.defaultValue == .string("n"))
        let code = try #require(entity.attribute(named: "code"))
        #expect(code.isUnique && code.isIndexed && code.minimumLength == 1)
        #expect(try #require(entity.attribute(named: "note")).isIndexed)
        let tag = try #require(entity.attribute(named: "tag"))
        #expect(tag.isUnique && tag.isIndexed)

        // Six expressions per object before: 300 per batch of 50. A batch may still count some: while another test
        // builds a model (they run in parallel), every wrapper initialized on any thread evaluates its declaration
        // and finds no capture of its own. That lasts a moment, not twenty batches.
        var objects: [Counted] = []
        var evaluatedPerBatch: [Int] = []
        for _ in 0..<20 {
            let before = Self.evaluations.load(ordering: .relaxed)
            objects += (0..<50).map { _ in Counted() }
            evaluatedPerBatch.append(Self.evaluations.load(ordering: .relaxed) - before)
        }
        #expect(evaluatedPerBatch.min() == 0, "evaluations per batch of 50 objects: \(evaluatedPerBatch)")
        #expect(objects.allSatisfy { $0.number == 7 && $0.name == "n" && $0.code == "c" && $0.note == nil })
    }

    @Test("new, inserted and fetched objects read the defaults (transient ones included)")
    func objectsReadTheModelsDefaults() throws {
        let model = try ObjectModel(types: [Declared.self, Part.self])
        let detached = Declared()
        #expect(detached.title == "untitled" && detached.number == 7 && detached.note == nil)
        #expect(detached.scratch == "scratch")

        let container = try ModelContainer(inMemoryWith: model)
        let context = container.newBackgroundContext()
        let inserted = Declared()
        context.insert(inserted)
        #expect(inserted.title == "untitled" && inserted.number == 7 && inserted.scratch == "scratch")
        inserted.title = "changed"
        try context.save()

        let reader = container.newBackgroundContext()
        let fetched = try #require(try reader.fetch(FetchDescriptor<Declared>()).first)
        #expect(fetched.title == "changed" && fetched.number == 7 && fetched.note == nil)
        #expect(fetched.scratch == "scratch")
    }

    @Test("a default computed per object is the object's own, the same on every read and after the save")
    func dynamicDefaultsArePerObject() throws {
        let container = try ModelContainer(inMemoryWith: try ObjectModel(types: [Stamped.self]))
        let context = container.newBackgroundContext()
        let read = Stamped()
        let token = read.token
        #expect(read.token == token, "a new object's computed default does not change between reads")
        let created = read.created
        context.insert(read)
        #expect(read.token == token && read.created == created)
        let other = Stamped()
        context.insert(other)
        #expect(other.token != token, "two objects compute their own defaults")
        try context.save()

        let fetched = try container.newBackgroundContext().fetch(FetchDescriptor<Stamped>())
        #expect(Set(fetched.map(\.token)) == [token, other.token])
        #expect(fetched.allSatisfy { $0.label == "stamped" })
    }

    @Test("objects made on other threads while a prototype is built are unaffected")
    func concurrentPrototypes() async throws {
        final class Concurrent: ManagedObject {
            @Attribute(.indexed) var value: String = "v"
        }
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        let info = ClassInfo(objectClass: Concurrent.self, superclassInfo: nil)
                        guard case .attribute(let seed) = info.seeds[0] else { return false }
                        return seed.options == [.indexed] && seed.defaultValue == .string("v")
                    }
                    return (0..<1000).allSatisfy { _ in Concurrent().value == "v" }
                }
            }
            for await isRight in group { #expect(isRight) }
        }
    }
}

@Suite("Chunks decoded from a checkpoint hold their arrays at their size")
struct DecodedChunkSizeTests {
    @Test("the arena, offset, key and version arrays of a decoded chunk have at most an eighth spare")
    func decodedArraysAreExact() throws {
        let directory = TemporaryDirectory()
        // 4,096 objects fill the first chunk, 904 make a partial last one (which reserved room for 4,096 slots).
        try StoredCheckpointIndexTests.compactedStore(at: directory.file(), count: 5_000)
        let container = try ModelContainer(path: directory.file(), model: StoredCheckpointIndexTests.model)
        defer { try? container.close() }
        let table = StoredCheckpointIndexTests.state(of: container).tables[StoredCheckpointIndexTests.itemEntity]
        func isExact<Element>(_ array: [Element]) -> Bool { array.capacity - array.count <= array.count / 8 }
        for index in 0..<2 {
            let chunk = try table.loadedChunk(at: index)
            #expect(chunk.slotCount == (index == 0 ? 4_096 : 904))
            #expect(isExact(chunk.keys) && isExact(chunk.versions) && isExact(chunk.valueCounts), "chunk \(index)")
            for (property, column) in chunk.columns.enumerated() {
                let arena = column.arena
                let exact = [
                    isExact(column.tags), isExact(column.words), isExact(arena.bytes), isExact(arena.starts),
                    isExact(arena.byteCounts),
                ]
                #expect(exact.allSatisfy { $0 }, "chunk \(index) property \(property): tags, words, arena \(exact)")
            }
        }
        // The values read back as they were written.
        let context = container.newBackgroundContext()
        let items = try context.fetch(FetchDescriptor<IndexedItem>(sortBy: [SortDescriptor(\.handle)]))
        #expect(items.count == 5_000 && items.first?.handle == StoredCheckpointIndexTests.identity(0))
    }
}
