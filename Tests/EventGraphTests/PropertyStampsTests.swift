import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A root class whose wrappers sit between plain stored properties, one of which holds what looks like a stamp.
class StampBase: ManagedObject {
    var scratch: [Int] = [1, 2]
    @Attribute(.indexed) var name: String = ""
    let marker: UInt16 = 0x8001
    @Attribute var count: Int64 = 0
    @Relationship(inverse: "owner") var items: Set<StampItem>
}

/// A subclass with an initializer of its own that sets its properties in another order than they are declared.
final class StampDerived: StampBase {
    @Attribute var first: Int64 = 0
    var note = "n"
    @Attribute var second: Int64 = 0
    @Attribute var label: String = "x"

    /// Reads and writes the inherited `name`, but is not `name`.
    var loud: String {
        get { name.uppercased() }
        set { name = newValue.lowercased() }
    }

    required init() { super.init() }

    init(label: String, first: Int64, second: Int64) {
        super.init()
        self.label = label
        self.second = second
        self.first = first
    }
}

/// A root entity with computed properties that read and write its indexed `title`.
final class StampItem: ManagedObject {
    @Attribute(.indexed) var title: String = ""
    @Relationship(inverse: "items") var owner: StampBase?

    /// Reads `title` and writes it, but is not `title`: a predicate on it must not be taken for one on `title`.
    var shout: String {
        get { title.uppercased() }
        set { title = newValue.lowercased() }
    }

    /// Reads `title` and nothing else.
    var quiet: String { title.lowercased() }

    /// Reads and writes through the relationship (a probe's is empty, and its setter would stop on it).
    var ownerName: String {
        get { owner?.name ?? "" }
        set { owner!.name = newValue }
    }
}

/// A class whose initializer makes another class's object and writes its property (allowed: it is not its own).
final class StampHolder: ManagedObject {
    @Attribute var name: String = ""
    let helper = StampItem()

    required init() {
        super.init()
        helper.title = "helper"
    }
}

enum StampModels {
    static let model = try! ObjectModel(
        name: "Stamps", version: "1", types: [StampBase.self, StampDerived.self, StampItem.self])
}

@Suite("Property wrappers are stamped with their property's index")
struct PropertyStampsTests {
    /// The tag of every ``Attribute`` and ``Relationship`` wrapper of an object, by property name, read through
    /// `Mirror` at every level of its class.
    private static func tags(of object: ManagedObject) -> [String: UInt16] {
        var tags: [String: UInt16] = [:]
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, label.hasPrefix("_"), child.value is any PropertyIntrospection,
                    let tag = Mirror(reflecting: child.value).children.first(where: { $0.label == "declarationTag" })?
                        .value as? UInt16
                else { continue }
                tags[String(label.dropFirst())] = tag
            }
            mirror = current.superclassMirror
        }
        return tags
    }

    private func expectStamped(_ object: ManagedObject, sourceLocation: SourceLocation = #_sourceLocation) {
        let info = ClassRegistry.info(for: type(of: object))
        let tags = Self.tags(of: object)
        #expect(tags.count == info.seeds.count, sourceLocation: sourceLocation)
        for (name, index) in info.indexByName {
            #expect(tags[name] == PropertyStamps.stampBit | UInt16(index), "\(name)", sourceLocation: sourceLocation)
        }
    }

    @Test("every wrapper of a new object holds its property's index, whichever initializer made it")
    func everyWrapperHoldsItsIndex() {
        _ = StampModels.model
        let plain = StampDerived()
        let assigned = StampDerived(label: "b", first: 7, second: 9)
        expectStamped(plain)
        expectStamped(assigned)
        expectStamped(StampItem())
        // The plain stored properties around the wrappers are as their initializers left them.
        #expect(assigned.scratch == [1, 2] && assigned.marker == 0x8001 && assigned.note == "n")
        #expect(assigned.label == "b" && assigned.first == 7 && assigned.second == 9 && assigned.count == 0)
        #expect(plain.label == "x" && plain.first == 0 && plain.name == "")
    }

    @Test("objects read and write every property through their stamps, before and after a save")
    func readsAndWritesGoThroughTheStamps() throws {
        let container = try ModelContainer(inMemoryWith: StampModels.model)
        let context = container.newBackgroundContext()
        for index in 0..<20 {
            let object = StampDerived(label: "label \(index)", first: Int64(index), second: Int64(-index))
            context.insert(object)
            object.name = "name \(index)"
            object.count = Int64(index * 10)
            let item = StampItem()
            context.insert(item)
            item.title = "item \(index)"
            item.owner = object
        }
        try context.save()

        let reader = container.newBackgroundContext()
        let objects = try reader.fetch(FetchDescriptor<StampDerived>(sortBy: [SortDescriptor(\.first)]))
        #expect(objects.count == 20)
        for (index, object) in objects.enumerated() {
            expectStamped(object)
            #expect(object.label == "label \(index)" && object.name == "name \(index)")
            #expect(object.first == Int64(index) && object.second == Int64(-index) && object.count == Int64(index * 10))
            #expect(object.items.map(\.title) == ["item \(index)"])
            #expect(object.scratch == [1, 2] && object.marker == 0x8001)
        }
    }

    @Test("a prototype keeps its declaration numbers; another thread's object made meanwhile is stamped")
    func prototypesAreNotStamped() {
        _ = StampModels.model
        let (prototype, session): (StampItem, PrototypeCapture.Session) = PrototypeCapture.capture(of: StampItem.self) {
            // Made and read while the capture is still going on: this thread builds a prototype, the other does not.
            let made = LockedValue<(tags: [String: UInt16], title: String)?>(nil)
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                let other = StampItem()
                made.withLock { $0 = (Self.tags(of: other), other.title) }
                done.signal()
            }
            thread.start()
            done.wait()
            let other = made.withLock { $0 }
            let info = ClassRegistry.info(for: StampItem.self)
            #expect(other?.tags == info.indexByName.mapValues { PropertyStamps.stampBit | UInt16($0) })
            #expect(other?.title == "")
            return StampItem()
        }
        let tags = Self.tags(of: prototype)
        #expect(Set(tags.values) == [1, 2])
        if case .attribute = session.declaration(tags["title"]!, property: "title") {
        } else {
            Issue.record("the prototype's title tag does not number its attribute declaration")
        }
    }

    @Test("an object another class's prototype makes is stamped, and its properties can be written")
    func objectsMadeByAPrototypeAreStamped() {
        let info = ClassRegistry.info(for: StampHolder.self)
        #expect(info.indexByName == ["name": 0])
        let holder = StampHolder()
        expectStamped(holder)
        expectStamped(holder.helper)
        #expect(holder.helper.title == "helper" && holder.name == "")
    }

    @Test("only an attribute's own key path is taken for it: not a computed property that reads or writes it")
    func directKeyPaths() throws {
        let item = ClassRegistry.info(for: StampItem.self)
        let title = try #require(item.indexByName["title"])
        #expect(PropertyKeyPathResolver.directAttributeIndex(of: \StampItem.title) == title)
        #expect(PropertyKeyPathResolver.directAttributeIndex(of: \StampItem.shout) == nil)
        #expect(PropertyKeyPathResolver.directAttributeIndex(of: \StampItem.quiet) == nil)
        #expect(PropertyKeyPathResolver.directAttributeIndex(of: \StampItem.ownerName) == nil)
        // Both read `title`.
        #expect(PropertyKeyPathResolver.attributeIndex(of: \StampItem.shout) == title)
        #expect(PropertyKeyPathResolver.attributeIndex(of: \StampItem.quiet) == title)
        // An inherited attribute's key path through the subclass is the attribute's; a computed property of the
        // subclass that reads and writes it is not.
        let derived = ClassRegistry.info(for: StampDerived.self)
        let name = try #require(derived.indexByName["name"])
        let label = try #require(derived.indexByName["label"])
        #expect(PropertyKeyPathResolver.directAttributeIndex(of: \StampDerived.name) == name)
        #expect(PropertyKeyPathResolver.directAttributeIndex(of: \StampBase.name) == name)
        #expect(PropertyKeyPathResolver.directAttributeIndex(of: \StampDerived.label) == label)
        #expect(PropertyKeyPathResolver.directAttributeIndex(of: \StampDerived.loud) == nil)
        #expect(FetchedResultsOrder.attributeIndex(of: \StampDerived.name as PartialKeyPath<StampDerived>) == name)
        #expect(FetchedResultsOrder.attributeIndex(of: \StampDerived.loud as PartialKeyPath<StampDerived>) == nil)
        #expect(FetchedResultsOrder.attributeIndex(of: \StampItem.shout as PartialKeyPath<StampItem>) == nil)
    }

    @Test("a predicate on a computed property that reads or writes an indexed attribute is not taken for one on it")
    func predicatesOnComputedPropertiesScan() throws {
        let container = try ModelContainer(inMemoryWith: StampModels.model)
        let context = container.newBackgroundContext()
        for index in 0..<50 {
            let item = StampItem()
            context.insert(item)
            item.title = index % 2 == 0 ? "even" : "Odd"
        }
        try context.save()
        // A predicate on `title` is translated: only the matching rows are examined. The others are evaluated on
        // every object.
        let direct = try context.fetch(FetchDescriptor<StampItem>(predicate: #Predicate { $0.title == "Odd" }))
        #expect(direct.count == 25 && context.lastFetchStatistics.rowsExamined == 25)
        let shouted = try context.fetch(FetchDescriptor<StampItem>(predicate: #Predicate { $0.shout == "ODD" }))
        #expect(shouted.count == 25 && context.lastFetchStatistics.rowsExamined == 50)
        let quiet = try context.fetch(FetchDescriptor<StampItem>(predicate: #Predicate { $0.quiet == "odd" }))
        #expect(quiet.count == 25 && context.lastFetchStatistics.rowsExamined == 50)
        let owned = try context.fetch(FetchDescriptor<StampItem>(predicate: #Predicate { $0.ownerName == "" }))
        #expect(owned.count == 50 && context.lastFetchStatistics.rowsExamined == 50)
        // Resolving the key paths wrote through probes, never through the store's objects.
        #expect(!context.hasChanges)
        #expect(try context.fetch(FetchDescriptor<StampItem>()).filter { $0.title == "even" }.count == 25)
    }
}
