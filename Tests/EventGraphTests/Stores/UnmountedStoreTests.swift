import EventGraph
import Foundation
import Testing

/// A container can open with a store not mounted: objects of the mounted stores keep their references into it, a
/// relationship read names what does not resolve, a save never drops nor half-writes what it cannot see, and
/// mounting the store again cleans up references to objects deleted meanwhile.
@Suite("Unmounted stores")
struct UnmountedStoreTests {
    /// The IDs of what ``enrol(in:)`` saves.
    struct Enrolment {
        var tutor: ObjectID
        var lecture: ObjectID
        var pupils: [ObjectID]
        var handout: ObjectID
    }

    /// A tutor (staff store) teaching a lecture (public store) with two pupils and a handout (private store).
    static func enrol(in directory: TemporaryDirectory) throws -> Enrolment {
        let container = try SeveralStoresModels.container(in: directory)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let lecture = Lecture()
        context.insert(lecture)
        lecture.code = "SE1"
        let tutor = Tutor()
        context.insert(tutor)
        tutor.name = "Ben"
        lecture.tutor = tutor
        let pupils = ["Ada", "Cy"].map { name in
            let pupil = Pupil()
            context.insert(pupil)
            pupil.name = name
            pupil.lectures.insert(lecture)
            return pupil
        }
        let handout = Handout()
        context.insert(handout)
        handout.title = "syllabus"
        lecture.handouts.insert(handout)
        try context.save()
        return Enrolment(
            tutor: tutor.objectID, lecture: lecture.objectID, pupils: pupils.map(\.objectID), handout: handout.objectID)
    }

    /// The campus stores with the stores of `unmounted` configurations given as `mounting`.
    private func stores(
        in directory: TemporaryDirectory, unmounted: Set<String>, mounting: StoreDescription.Mounting = .never
    ) -> [StoreDescription] {
        SeveralStoresModels.stores(in: directory).map { description in
            var description = description
            if unmounted.contains(description.configuration) { description.mounting = mounting }
            return description
        }
    }

    /// Runs `body` with a context of a container of the campus stores, some not mounted; closes the container after.
    private func withContext<R>(
        in directory: TemporaryDirectory, unmounted: Set<String> = [],
        _ body: (ModelContainer, ObjectContext) throws -> R
    ) throws -> R {
        let container = try ModelContainer(
            model: SeveralStoresModels.campus, stores: stores(in: directory, unmounted: unmounted))
        defer { try? container.close() }
        return try body(container, container.newBackgroundContext())
    }

    @Test(arguments: [StoreDescription.Mounting.never, .ifPresent])
    func aStoreNotMountedIsListedWithItsConfigurationAndUUID(mounting: StoreDescription.Mounting) throws {
        let directory = TemporaryDirectory()
        let ids = try Self.enrol(in: directory)
        if mounting == .ifPresent {
            try FileManager.default.moveItem(atPath: directory.file("public.eglog"), toPath: directory.file("away"))
        }
        let container = try ModelContainer(
            model: SeveralStoresModels.campus,
            stores: stores(in: directory, unmounted: ["Public"], mounting: mounting))
        defer { try? container.close() }
        let unmounted = try #require(container.unmountedStores.first)
        #expect(container.unmountedStores.count == 1, "\(container.unmountedStores)")
        #expect(unmounted.configuration == "Public")
        #expect(unmounted.storeUUID == ids.lecture.storeUUID, "known from the file's header or the other logs")
        #expect(!container.isMounted(configuration: "Public"))
        #expect(container.isMounted(configuration: "Staff"))
        if mounting == .ifPresent {
            #expect(!FileManager.default.fileExists(atPath: directory.file("public.eglog")), "a missing store stays so")
        }
        #expect(try container.newBackgroundContext().fetchCount(FetchDescriptor<Lecture>()) == 0)
    }

    @Test func noStoreMountedIsRefused() throws {
        let directory = TemporaryDirectory()
        let stores = SeveralStoresModels.stores(in: directory).map { description in
            var description = description
            description.mounting = .never
            return description
        }
        let error = try #require(throws: EventGraphError.self) {
            try ModelContainer(model: SeveralStoresModels.campus, stores: stores)
        }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("none of the stores given is mounted"), "\(error)")
    }

    @Test func aRelationshipIntoAnUnmountedStoreReadsWhatResolvesAndNamesTheRest() throws {
        let directory = TemporaryDirectory()
        let ids = try Self.enrol(in: directory)
        try withContext(in: directory, unmounted: ["Public"]) { _, context in
            let pupil = try #require(context.object(with: ids.pupils[0]) as? Pupil)
            #expect(pupil.lectures.isEmpty, "no object of a store that is not there")
            let handout = try #require(context.object(with: ids.handout) as? Handout)
            #expect(handout.lecture == nil)
            for object in [pupil as ManagedObject, handout] {
                let unresolved = context.unresolvedReferences(of: object)
                #expect(unresolved.map(\.target) == [ids.lecture], "\(unresolved)")
                #expect(unresolved.first?.store.configuration == "Public")
                #expect(unresolved.first?.store.storeUUID == ids.lecture.storeUUID)
            }
            let error = try #require(throws: EventGraphError.self) {
                try context.relatedObjects(of: pupil, relationship: "lectures")
            }
            #expect(error.code == .storeNotMounted)
            #expect(error.message.contains("'Public'") && error.message.contains(ids.lecture.uriString), "\(error)")
            #expect(context.object(with: ids.lecture) == nil)
        }
    }

    @Test func otherPropertiesChangeAndSaveAndTheHiddenReferencesSurvive() throws {
        let directory = TemporaryDirectory()
        let ids = try Self.enrol(in: directory)
        try withContext(in: directory, unmounted: ["Public"]) { _, context in
            let pupil = try #require(context.object(with: ids.pupils[0]) as? Pupil)
            pupil.name = "Ada L."
            // Writing back what the property reads (nothing) must not drop the reference it could not show.
            pupil.lectures = pupil.lectures
            try context.save()
        }
        try withContext(in: directory) { _, context in
            let pupil = try #require(context.object(with: ids.pupils[0]) as? Pupil)
            #expect(pupil.name == "Ada L.")
            #expect(pupil.lectures.map(\.code) == ["SE1"])
            let lecture = try #require(context.object(with: ids.lecture) as? Lecture)
            #expect(Set(lecture.pupils.map(\.name)) == ["Ada L.", "Cy"])
        }
    }

    @Test func aDenyRuleAcrossAnUnmountedStoreRefusesTheSaveAndSaysWhy() throws {
        let directory = TemporaryDirectory()
        let ids = try Self.enrol(in: directory)
        try withContext(in: directory, unmounted: ["Public"]) { _, context in
            context.delete(try #require(context.object(with: ids.tutor)))
            let error = try #require(throws: EventGraphError.self) { try context.save() }
            #expect(error.code == .deleteDenied, "\(error)")
            let failure = try #require(error.failures.first)
            #expect(failure.propertyName == "lectures")
            #expect(failure.message.contains("unmounted store of the configuration 'Public'"), "\(failure.message)")
            #expect(failure.message.contains(ids.lecture.uriString), "\(failure.message)")
        }
        try withContext(in: directory) { _, context in
            #expect((context.object(with: ids.lecture) as? Lecture)?.tutor?.objectID == ids.tutor)
        }
    }

    @Test func aChangeThatWouldReachIntoAnUnmountedStoreIsRefused() throws {
        let directory = TemporaryDirectory()
        let ids = try Self.enrol(in: directory)
        try withContext(in: directory, unmounted: ["Public"]) { _, context in
            let handout = try #require(context.object(with: ids.handout) as? Handout)
            // The lecture's handouts (its inverse, in the public store) would have to lose the handout.
            handout.lecture = nil
            handout.title = "notes"
            let error = try #require(throws: EventGraphError.self) { try context.save() }
            #expect(error.code == .storeNotMounted, "\(error)")
            #expect(error.message.contains("Lecture \(ids.lecture.uriString)"), "\(error)")
            #expect(error.message.contains("'Public'"), "\(error)")
        }
        try withContext(in: directory) { _, context in
            let handout = try #require(context.object(with: ids.handout) as? Handout)
            #expect(handout.title == "syllabus", "nothing of the refused save was written")
            #expect(handout.lecture?.objectID == ids.lecture)
        }
    }

    @Test func referencesToObjectsDeletedWhileUnmountedAreCleanedUpAndReportedOnMount() throws {
        let directory = TemporaryDirectory()
        let ids = try Self.enrol(in: directory)
        try withContext(in: directory, unmounted: ["Public"]) { container, context in
            #expect(container.referenceCleanup.isEmpty)
            context.delete(try #require(context.object(with: ids.pupils[0])))
            try context.save()
        }
        let digest = try withContext(in: directory) { container, context in
            let cleaned = container.referenceCleanup.cleanedReferences
            #expect(cleaned.map(\.source) == [ids.lecture], "\(cleaned)")
            #expect(cleaned.map(\.relationshipName) == ["pupils"])
            #expect(cleaned.map(\.target) == [ids.pupils[0]])
            let lecture = try #require(context.object(with: ids.lecture) as? Lecture)
            #expect(lecture.pupils.map(\.name) == ["Cy"])
            return try container.stateDigest(ofConfiguration: "Public")
        }
        try withContext(in: directory) { container, _ in
            #expect(container.referenceCleanup.isEmpty, "the cleanup was saved")
            let reopened = try container.stateDigest(ofConfiguration: "Public")
            #expect(reopened == digest)
        }
    }

    @Test func aDeleteOnTheOtherSideIsCleanedUpInTheStoreThatWasAway() throws {
        let directory = TemporaryDirectory()
        let ids = try Self.enrol(in: directory)
        try withContext(in: directory, unmounted: ["Staff"]) { _, context in
            let lecture = try #require(context.object(with: ids.lecture) as? Lecture)
            #expect(lecture.tutor == nil, "a to-one into an unmounted store reads nil")
            #expect(context.unresolvedReferences(of: lecture).map(\.relationshipName) == ["tutor"])
            context.delete(lecture)
            try context.save()
        }
        try withContext(in: directory) { container, context in
            let cleaned = container.referenceCleanup.cleanedReferences
            #expect(cleaned.map(\.description) == ["\(ids.tutor.uriString).lectures → \(ids.lecture.uriString)"])
            #expect((context.object(with: ids.tutor) as? Tutor)?.lectures.isEmpty == true)
        }
    }

    @Test func aCascadeIntoAnUnmountedStoreIsRefused() throws {
        let directory = TemporaryDirectory()
        let ids = try Self.enrol(in: directory)
        try withContext(in: directory, unmounted: ["Default"]) { _, context in
            context.delete(try #require(context.object(with: ids.lecture)))
            let error = try #require(throws: EventGraphError.self) { try context.save() }
            #expect(error.code == .storeNotMounted, "\(error)")
            #expect(error.message.contains("delete Handout \(ids.handout.uriString)"), "\(error)")
        }
        try withContext(in: directory) { _, context in
            #expect((context.object(with: ids.handout) as? Handout)?.lecture?.objectID == ids.lecture)
        }
    }
}
