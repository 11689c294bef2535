import EventGraph
import Foundation
import Testing

/// A container opens one store per configuration; contexts insert into, fetch from and resolve IDs in all of them.
@Suite("A container of several stores")
struct SeveralStoresContainerTests {
    /// Saves a pupil, a tutor and a lecture with a session; returns their IDs.
    private func populate(_ container: ModelContainer) throws -> [String: ObjectID] {
        let context = container.newBackgroundContext()
        let pupil = Pupil()
        context.insert(pupil)
        pupil.name = "Ada"
        let tutor = Tutor()
        context.insert(tutor)
        tutor.name = "Ben"
        let lecture = Lecture()
        context.insert(lecture)
        lecture.code = "SE1"
        let session = Session()
        context.insert(session)
        session.lecture = lecture
        try context.save()
        return [
            "Pupil": pupil.objectID, "Tutor": tutor.objectID, "Lecture": lecture.objectID, "Session": session.objectID,
        ]
    }

    @Test func aNewObjectIsSavedInTheStoreOfItsConfiguration() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let ids = try populate(container)
        let expected = ["Pupil": "Default", "Tutor": "Staff", "Lecture": "Public", "Session": "Public"]
        for (entity, configuration) in expected {
            #expect(ids[entity]?.storeUUID == container.storeUUID(ofConfiguration: configuration), "\(entity)")
            #expect(ids[entity]?.isTemporary == false)
        }
        try container.close()

        // Each file on its own holds its configuration's objects only.
        for (file, entities) in [
            ("private.eglog", ["Pupil"]), ("staff.eglog", ["Tutor"]), ("public.eglog", ["Lecture", "Session"]),
        ] {
            let view = try ModelContainer.view(path: directory.file(file), model: SeveralStoresModels.campus)
            let context = view.newBackgroundContext()
            let counts = try ["Pupil", "Tutor", "Lecture", "Session"].filter { name in
                switch name {
                case "Pupil": try context.fetchCount(FetchDescriptor<Pupil>()) > 0
                case "Tutor": try context.fetchCount(FetchDescriptor<Tutor>()) > 0
                case "Lecture": try context.fetchCount(FetchDescriptor<Lecture>()) > 0
                default: try context.fetchCount(FetchDescriptor<Session>()) > 0
                }
            }
            #expect(counts == entities, "\(file)")
        }
    }

    @Test func aFetchSpansEveryStoreHoldingTheEntityOrItsSubEntities() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        _ = try populate(container)
        let context = container.newBackgroundContext()
        let members = try context.fetch(FetchDescriptor<Member>(sortBy: [SortDescriptor(\.name)]))
        #expect(members.map(\.name) == ["Ada", "Ben"])
        #expect(members.first is Pupil && members.last is Tutor)
        #expect(try context.fetchCount(FetchDescriptor<Member>()) == 2)
        let named = try context.fetch(FetchDescriptor<Member>(predicate: #Predicate { $0.name == "Ben" }))
        #expect(named.map(\.name) == ["Ben"], "an indexed lookup spans the stores too")
    }

    @Test func anIDResolvesInItsStoreAfterReopening() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let ids = try populate(container)
        let digests = try ["Default", "Staff", "Public"].map { try container.stateDigest(ofConfiguration: $0) }
        try container.close()

        let reopened = try SeveralStoresModels.container(in: directory)
        let context = reopened.newBackgroundContext()
        // Every store numbers its objects from the same start: the first pupil, tutor and lecture share a key.
        #expect(Set([ids["Pupil"]!.key, ids["Tutor"]!.key, ids["Lecture"]!.key]).count == 1)
        #expect((context.object(with: ids["Pupil"]!) as? Pupil)?.name == "Ada")
        #expect((context.object(with: ids["Tutor"]!) as? Tutor)?.name == "Ben")
        let session = try #require(context.object(with: ids["Session"]!) as? Session)
        #expect(session.lecture?.code == "SE1", "a reference within the public store resolves there")
        #expect(session.lecture?.objectID == ids["Lecture"])
        #expect(try ["Default", "Staff", "Public"].map { try reopened.stateDigest(ofConfiguration: $0) } == digests)
    }

    @Test func changesAndDeletesGoToTheObjectsStores() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let ids = try populate(container)
        let context = container.newBackgroundContext()
        let tutor = try #require(context.object(with: ids["Tutor"]!) as? Tutor)
        tutor.office = "B12"
        context.delete(try #require(context.object(with: ids["Lecture"]!)))
        try context.save()
        try container.close()

        let reopened = try SeveralStoresModels.container(in: directory).newBackgroundContext()
        #expect((reopened.object(with: ids["Tutor"]!) as? Tutor)?.office == "B12")
        #expect(try reopened.fetchCount(FetchDescriptor<Lecture>()) == 0)
        #expect(try reopened.fetchCount(FetchDescriptor<Session>()) == 0, "the delete cascaded in the public store")
    }
}
