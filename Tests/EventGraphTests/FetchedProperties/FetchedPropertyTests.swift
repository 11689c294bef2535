import Foundation
import Testing

@testable import EventGraph

// Seed 003's Teacher → courses: a professor (private store) finds the seminars (public store) that name them, and the
// colleagues of their department (same store); neither is stored.

private final class Professor: ManagedObject {
    @Attribute var name: String = ""
    @Attribute var department: String = ""

    @FetchedProperty(
        predicate: { (professor: Professor) in
            let name = professor.name
            return #Predicate<Seminar> { $0.professorName == name }
        },
        sortBy: [SortDescriptor(\.title)])
    var seminars: [Seminar]

    @FetchedProperty(
        predicate: { (professor: Professor) in
            let (name, department) = (professor.name, professor.department)
            return #Predicate<Professor> { $0.department == department && $0.name != name }
        },
        sortBy: [SortDescriptor(\.name)])
    var colleagues: [Professor]
}

private final class Seminar: ManagedObject {
    @Attribute var title: String = ""
    @Attribute var professorName: String = ""
}

/// The professor's entity without its fetched properties: the same stored shape.
private final class PlainProfessor: ManagedObject {
    override class var entityName: String { "Professor" }
    @Attribute var name: String = ""
    @Attribute var department: String = ""
}

private enum Faculty {
    static let model = try! ObjectModel(
        name: "Faculty", types: [Professor.self, Seminar.self], configurations: ["Public": [Seminar.self]])

    static func stores(in directory: TemporaryDirectory) -> [StoreDescription] {
        [
            StoreDescription(path: directory.file("private.eglog")),
            StoreDescription(path: directory.file("public.eglog"), configuration: "Public"),
        ]
    }

    /// Ada and Ben (mathematics) and Cy (physics) in the private store; Ada's two seminars in the public one.
    static func populate(_ context: ObjectContext) throws {
        for (name, department) in [("Ada", "maths"), ("Ben", "maths"), ("Cy", "physics")] {
            let professor = Professor()
            context.insert(professor)
            professor.name = name
            professor.department = department
        }
        for title in ["Topology", "Algebra"] {
            let seminar = Seminar()
            context.insert(seminar)
            seminar.title = title
            seminar.professorName = "Ada"
        }
        try context.save()
    }

    static func professor(_ name: String, in context: ObjectContext) throws -> Professor {
        try #require(try context.fetch(FetchDescriptor<Professor>(predicate: #Predicate { $0.name == name })).first)
    }

    static func addSeminar(_ title: String, by name: String, in context: ObjectContext) throws {
        let seminar = Seminar()
        context.insert(seminar)
        seminar.title = title
        seminar.professorName = name
        try context.save()
    }
}

@Suite("Fetched properties")
struct FetchedPropertyTests {
    @Test func aFetchedPropertyInTheSameStoreFetchesByTheSourceObjectAndSorts() throws {
        let container = try ModelContainer(inMemoryWith: Faculty.model)
        let context = container.newBackgroundContext()
        try Faculty.populate(context)
        let reader = container.newBackgroundContext()
        let ada = try Faculty.professor("Ada", in: reader)
        #expect(ada.colleagues.map(\.name) == ["Ben"])
        #expect(try Faculty.professor("Cy", in: reader).colleagues.isEmpty)
        #expect(ada.seminars.map(\.title) == ["Algebra", "Topology"])
    }

    @Test func aFetchedPropertyFetchesFromTheStoreOfItsTargetsConfiguration() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(model: Faculty.model, stores: Faculty.stores(in: directory))
        defer { try? container.close() }
        try Faculty.populate(container.newBackgroundContext())
        let reader = container.newBackgroundContext()
        let ada = try Faculty.professor("Ada", in: reader)
        let seminars = ada.seminars
        #expect(seminars.map(\.title) == ["Algebra", "Topology"])
        let publicStore = try #require(container.storeUUID(ofConfiguration: "Public"))
        #expect(seminars.allSatisfy { $0.objectID.storeUUID == publicStore })
        #expect(ada.objectID.storeUUID != publicStore)
        #expect(ada.colleagues.map(\.name) == ["Ben"], "and one in the source's own store, in the same container")
    }

    /// The public store's last transaction stays below the private store's, so a stamp of the largest transaction
    /// alone would not see the public store's save.
    @Test func aSaveInTheTargetsStoreByAnotherContextIsSeenOnTheNextRead() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(model: Faculty.model, stores: Faculty.stores(in: directory))
        defer { try? container.close() }
        let writer = container.newBackgroundContext()
        try Faculty.populate(writer)
        for department in ["history", "art", "music"] {
            try Faculty.professor("Cy", in: writer).department = department
            try writer.save()
        }
        let reader = container.newBackgroundContext()
        let ada = try Faculty.professor("Ada", in: reader)
        #expect(ada.seminars.count == 2)
        try Faculty.addSeminar("Logic", by: "Ada", in: writer)
        #expect(ada.seminars.map(\.title) == ["Algebra", "Logic", "Topology"])
    }

    @Test func theResultIsKeptUntilASaveThenFetchedAgain() throws {
        let container = try ModelContainer(inMemoryWith: Faculty.model)
        let context = container.newBackgroundContext()
        try Faculty.populate(context)
        let ada = try Faculty.professor("Ada", in: context)
        #expect(ada.seminars.count == 2)
        let seminar = Seminar()
        context.insert(seminar)
        seminar.title = "Logic"
        seminar.professorName = "Ada"
        #expect(ada.seminars.count == 2, "an unsaved insert does not refetch by itself")
        try context.save()
        #expect(ada.seminars.map(\.title) == ["Algebra", "Logic", "Topology"])
    }

    @Test(arguments: [false, true])
    func refreshingTheObjectFetchesAgain(mergeChanges: Bool) throws {
        let container = try ModelContainer(inMemoryWith: Faculty.model)
        let context = container.newBackgroundContext()
        try Faculty.populate(context)
        let ada = try Faculty.professor("Ada", in: context)
        #expect(ada.seminars.count == 2)
        let algebra = try #require(ada.seminars.first)
        algebra.professorName = "Ben"
        #expect(ada.seminars.count == 2, "unsaved, and no refresh yet")
        context.refresh(ada, mergeChanges: mergeChanges)
        #expect(ada.seminars.map(\.title) == ["Topology"], "the fetch sees the context's unsaved change")
    }

    @Test func aChildContextReadsFetchedPropertiesThroughItsParent() throws {
        let container = try ModelContainer(inMemoryWith: Faculty.model)
        let parent = container.newBackgroundContext()
        try Faculty.populate(parent)
        let child = parent.makeChildContext(name: "child")
        #expect(try Faculty.professor("Ada", in: child).seminars.map(\.title) == ["Algebra", "Topology"])
    }

    @Test func aChildSavePushedIntoTheContextFetchesAgain() throws {
        let container = try ModelContainer(inMemoryWith: Faculty.model)
        let parent = container.newBackgroundContext()
        try Faculty.populate(parent)
        let ada = try Faculty.professor("Ada", in: parent)
        #expect(ada.seminars.count == 2)
        let child = parent.makeChildContext(name: "child")
        try Faculty.addSeminar("Logic", by: "Ada", in: child)
        #expect(ada.seminars.map(\.title) == ["Algebra", "Logic", "Topology"], "the parent's unsaved insert")
        let sibling = parent.makeChildContext(name: "sibling")
        let seen = try Faculty.professor("Ada", in: sibling)
        #expect(seen.seminars.count == 3)
        try Faculty.addSeminar("Sets", by: "Ada", in: parent.makeChildContext(name: "other"))
        #expect(seen.seminars.count == 4, "a sibling's save into the parent")
    }

    @Test func anUnmountedTargetStoreIsAClearError() throws {
        let objectStore = DictionaryObjectStore(
            model: Faculty.model, storeCount: 2, placement: ["Seminar": 1], unmountedConfigurations: ["Public"])
        let context = ObjectContext(parentStore: objectStore, name: "private only")
        let ada = Professor()
        context.insert(ada)
        ada.name = "Ada"
        try context.save()

        let error = try #require(throws: EventGraphError.self) { try ada.$seminars.get() }
        #expect(error.code == .storeNotMounted)
        #expect(error.message.contains("Professor.seminars"))
        #expect(error.message.contains("'Public'"))
        #expect(throws: EventGraphError.self) { try ada.fetchedObjects(named: "seminars") }
        #expect(try ada.$colleagues.get().isEmpty, "a fetch in a mounted store still works")
    }

    @Test func aTargetOutsideTheModelIsRefusedWhenTheModelIsBuilt() throws {
        let error = try #require(throws: EventGraphError.self) {
            try ObjectModel(name: "NoSeminars", types: [Professor.self])
        }
        #expect(error.code == .invalidModel)
        #expect(error.message.contains("Professor.seminars fetches Seminar objects"))
    }

    @Test func fetchedPropertiesAreNeitherStoredNorHashed() throws {
        let entity = try #require(Faculty.model.entity(named: "Professor"))
        #expect(entity.fetchedProperties.map(\.name) == ["seminars", "colleagues"])
        #expect(entity.fetchedProperty(named: "seminars")?.destinationEntityName == "Seminar")
        #expect(entity.properties.map(\.name) == ["name", "department"])
        let plain = try ObjectModel(
            name: "Faculty", types: [PlainProfessor.self, Seminar.self], configurations: ["Public": [Seminar.self]])
        #expect(plain.hash == Faculty.model.hash)

        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: Faculty.model)
        try Faculty.populate(container.newBackgroundContext())
        try container.close()
        let recorded = try ModelContainer(path: directory.file())
        defer { try? recorded.close() }
        #expect(recorded.model.entity(named: "Professor")?.fetchedProperties.isEmpty == true)
        #expect(recorded.model.hash == Faculty.model.hash)
    }
}
