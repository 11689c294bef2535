import EventGraph
import Foundation
import LogFormat
import Testing

/// Relationships whose two sides live in different stores are ordinary relationships: each side is recorded in its
/// own store's log as the other object's permanent ID (store, entity, key).
@Suite("Relationships across stores")
struct CrossStoreRelationshipTests {
    /// A tutor (staff store) teaching a lecture (public store) with two pupils (private store) and a handout
    /// (private store), all new in one save.
    private func enrol(in container: ModelContainer) throws -> (tutor: ObjectID, lecture: ObjectID, pupils: [ObjectID])
    {
        let context = container.newBackgroundContext()
        let lecture = Lecture()
        context.insert(lecture)
        lecture.code = "SE1"
        let tutor = Tutor()
        context.insert(tutor)
        tutor.name = "Ben"
        lecture.tutor = tutor
        var pupils: [Pupil] = []
        for name in ["Ada", "Cy"] {
            let pupil = Pupil()
            context.insert(pupil)
            pupil.name = name
            pupil.lectures.insert(lecture)
            pupils.append(pupil)
        }
        let handout = Handout()
        context.insert(handout)
        handout.title = "syllabus"
        lecture.handouts.insert(handout)
        try context.save()
        return (tutor.objectID, lecture.objectID, pupils.map(\.objectID))
    }

    private func enrolAndClose(in directory: TemporaryDirectory) throws -> (
        tutor: ObjectID, lecture: ObjectID, pupils: [ObjectID]
    ) {
        let container = try SeveralStoresModels.container(in: directory)
        defer { try? container.close() }
        return try enrol(in: container)
    }

    /// A context of a new container of the stores in `directory`, which `body` uses; the container is closed after.
    private func withContext<R>(in directory: TemporaryDirectory, _ body: (ObjectContext) throws -> R) throws -> R {
        let container = try SeveralStoresModels.container(in: directory)
        defer { try? container.close() }
        return try body(container.newBackgroundContext())
    }

    @Test func newObjectsRelatedAcrossStoresInOneSaveResolveAfterReopening() throws {
        let directory = TemporaryDirectory()
        let ids = try enrolAndClose(in: directory)
        let container = try SeveralStoresModels.container(in: directory)
        defer { try? container.close() }
        let context = container.newBackgroundContext()

        let lecture = try #require(context.object(with: ids.lecture) as? Lecture)
        #expect(lecture.tutor?.name == "Ben")
        #expect(lecture.tutor?.objectID == ids.tutor)
        #expect(Set(lecture.pupils.map(\.name)) == ["Ada", "Cy"])
        #expect(lecture.handouts.map(\.title) == ["syllabus"])
        let pupil = try #require(context.object(with: ids.pupils[0]) as? Pupil)
        #expect(pupil.lectures.map(\.code) == ["SE1"], "the inverse, in the private store")
        #expect(pupil.lectures.first === lecture, "both sides resolve to the same object")
        let tutor = try #require(context.object(with: ids.tutor) as? Tutor)
        #expect(tutor.lectures.map(\.code) == ["SE1"])
    }

    @Test func eachSideIsRecordedInItsOwnLogAsTheTargetsPermanentID() throws {
        let directory = TemporaryDirectory()
        let ids = try enrolAndClose(in: directory)

        // The public store's log: the lecture's pupils are references into the private store, by their keys.
        var publicChangesets: [Changeset] = []
        try LogReader(path: directory.file("public.eglog")).scan { record in
            if case .transaction(let transaction) = record { publicChangesets.append(try transaction.changeset()) }
        }
        let save = try #require(publicChangesets.last)
        let privateUUID = ids.pupils[0].storeUUID.logUUID
        let privateIndex = try #require(save.foreignStores.firstIndex(of: privateUUID)).advanced(by: 1)
        let lectureInserts = save.operations.compactMap { operation -> [PropertyChange]? in
            if case .insert(let reference, let changes) = operation, reference.key == ids.lecture.key {
                changes
            } else {
                nil
            }
        }
        let lectureEntity = try #require(SeveralStoresModels.campus.entity(named: "Lecture"))
        let pupilsIndex = try #require(lectureEntity.properties.firstIndex { $0.name == "pupils" })
        let targets = try #require(lectureInserts.first).flatMap { change -> [ObjectReference] in
            guard change.propertyIndex == pupilsIndex, case .toMany(let references) = change.value else { return [] }
            return references
        }
        #expect(
            Set(targets.filter { $0.storeIndex == UInt32(privateIndex) }.map(\.key)) == Set(ids.pupils.map(\.key)),
            "\(save)")
    }

    @Test func aSaveWithinOneStoreRecordsNoForeignStores() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let context = container.newBackgroundContext()
        let lecture = Lecture()
        context.insert(lecture)
        lecture.code = "SE2"
        let session = Session()
        context.insert(session)
        session.lecture = lecture
        try context.save()
        try container.close()
        var last: Changeset?
        try LogReader(path: directory.file("public.eglog")).scan { record in
            if case .transaction(let transaction) = record { last = try transaction.changeset() }
        }
        let save = try #require(last)
        #expect(save.operations.count == 2)
        #expect(save.foreignStores.isEmpty, "a save that stays in one store writes what one store writes")
    }

    @Test func deletingAnObjectNullifiesItsInversesInTheOtherStore() throws {
        let directory = TemporaryDirectory()
        let ids = try enrolAndClose(in: directory)
        try withContext(in: directory) { context in
            context.delete(try #require(context.object(with: ids.pupils[0])))
            try context.save()
        }
        try withContext(in: directory) { context in
            let lecture = try #require(context.object(with: ids.lecture) as? Lecture)
            #expect(lecture.pupils.map(\.name) == ["Cy"], "the public store's side no longer lists the deleted pupil")
        }
    }

    @Test func deletingALectureCascadesIntoTheOtherStoreAndNullifiesTheTutor() throws {
        let directory = TemporaryDirectory()
        let ids = try enrolAndClose(in: directory)
        try withContext(in: directory) { context in
            context.delete(try #require(context.object(with: ids.lecture)))
            try context.save()
        }
        try withContext(in: directory) { context in
            let handouts = try context.fetchCount(FetchDescriptor<Handout>())
            #expect(handouts == 0, "the cascade reached the private store")
            #expect((context.object(with: ids.tutor) as? Tutor)?.lectures.isEmpty == true)
            #expect((context.object(with: ids.pupils[1]) as? Pupil)?.lectures.isEmpty == true)
        }
    }

    @Test func aDenyRuleAcrossStoresRefusesTheDelete() throws {
        let directory = TemporaryDirectory()
        let ids = try enrolAndClose(in: directory)
        try withContext(in: directory) { context in
            context.delete(try #require(context.object(with: ids.tutor)))
            let error = try #require(throws: EventGraphError.self) { try context.save() }
            #expect(error.code == .deleteDenied, "\(error)")
        }
        try withContext(in: directory) { context in
            #expect((context.object(with: ids.lecture) as? Lecture)?.tutor?.name == "Ben")
        }
    }

    @Test func movingAPupilBetweenLecturesUpdatesBothStores() throws {
        let directory = TemporaryDirectory()
        let ids = try enrolAndClose(in: directory)
        try withContext(in: directory) { context in
            let pupil = try #require(context.object(with: ids.pupils[0]) as? Pupil)
            let other = Lecture()
            context.insert(other)
            other.code = "SE2"
            pupil.lectures = [other]
            try context.save()
        }
        try withContext(in: directory) { context in
            let first = try #require(context.object(with: ids.lecture) as? Lecture)
            #expect(first.pupils.map(\.name) == ["Cy"])
            let moved = try #require(context.object(with: ids.pupils[0]) as? Pupil)
            #expect(moved.lectures.map(\.code) == ["SE2"])
            #expect(moved.lectures.first?.pupils.map(\.name) == ["Ada"])
        }
    }

    /// A pupil and a tutor with the same key (each store numbers from the same start) in one lecture's guests.
    @Test(arguments: ["Pupil", "Tutor"])
    func aListHoldingObjectsOfTwoStoresWithOneKeyTellsThemApart(removed: String) throws {
        let directory = TemporaryDirectory()
        let (pupilID, tutorID, lectureID) = try withContext(in: directory) { context in
            let pupil = Pupil()
            context.insert(pupil)
            pupil.name = "Ada"
            let tutor = Tutor()
            context.insert(tutor)
            tutor.name = "Ben"
            let lecture = Lecture()
            context.insert(lecture)
            lecture.guests = [pupil]
            try context.save()
            lecture.guests.insert(tutor)
            try context.save()
            return (pupil.objectID, tutor.objectID, lecture.objectID)
        }
        try #require(pupilID.key == tutorID.key, "the two stores handed out the same key")
        try withContext(in: directory) { context in
            let lecture = try #require(context.object(with: lectureID) as? Lecture)
            #expect(Set(lecture.guests.map(\.name)) == ["Ada", "Ben"], "adding the tutor kept the pupil of that key")
            let guest = try #require(context.object(with: removed == "Pupil" ? pupilID : tutorID) as? Member)
            lecture.guests.remove(guest)
            try context.save()
        }
        try withContext(in: directory) { context in
            let lecture = try #require(context.object(with: lectureID) as? Lecture)
            #expect(lecture.guests.map(\.name) == [removed == "Pupil" ? "Ben" : "Ada"], "only the removed one left")
        }
    }
}
