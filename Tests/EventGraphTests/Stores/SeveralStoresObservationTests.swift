import Foundation
import Testing

@testable import EventGraph

/// With several stores, a context's object store is a coordinator, not a store: automatic merging and a results
/// controller followed nothing (they looked for one store beneath the root). A save across stores commits one
/// transaction per store, numbered per store, so a context's own transactions are told apart by store too.
@Suite("Merging and live results in a container of several stores")
struct SeveralStoresObservationTests {
    @Test func aMergingContextTakesAnotherContextsSaveAcrossStores() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let viewer = container.newBackgroundContext(name: "viewer")
        viewer.automaticallyMergesChangesFromParent = true
        let pupil = Pupil()
        viewer.insert(pupil)
        pupil.name = "Ada"
        let lecture = Lecture()
        viewer.insert(lecture)
        lecture.code = "SE1"
        try viewer.save()
        var reports: [ContextChanges] = []
        let observation = viewer.observeChanges { reports.append($0) }
        viewer.processPendingChanges()
        #expect(reports.isEmpty, "its own save, one transaction per store, is not merged back")

        let writer = container.newBackgroundContext(name: "writer")
        let theirPupil = try #require(writer.object(with: pupil.objectID) as? Pupil)
        let theirLecture = try #require(writer.object(with: lecture.objectID) as? Lecture)
        theirPupil.number = 7
        theirLecture.code = "SE2"
        try writer.save()
        viewer.processPendingChanges()

        #expect(pupil.number == 7 && lecture.code == "SE2")
        let merged = reports.filter { if case .merged = $0.reason { true } else { false } }
        #expect(Set(merged.flatMap(\.updatedIDs)) == [pupil.objectID, lecture.objectID])
        observation.cancel()
        try container.close()
    }

    @Test func aResultsControllerSeesASaveInTheSecondStore() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let viewer = container.newBackgroundContext(name: "viewer")
        let controller = try FetchedResultsController(
            FetchDescriptor<Lecture>(sortBy: [SortDescriptor(\.code)]), in: viewer)
        let writer = container.newBackgroundContext(name: "writer")
        for code in ["SE2", "SE1"] {
            let lecture = Lecture()
            writer.insert(lecture)
            lecture.code = code
        }
        try writer.save()
        let difference = try controller.processPendingChanges()
        #expect(difference.insertedRows.map(\.indexPath.row) == [0, 1])
        #expect(controller.fetchedObjects.map(\.code) == ["SE1", "SE2"])
        try container.close()
    }
}
