import Foundation
import Testing

@testable import EventGraph

/// Collects a context's reports through the callback API.
private final class Recorder {
    var reports: [ContextChanges] = []
    var observation: ContextChangesObservation?

    init(_ context: ObjectContext) {
        observation = context.observeChanges { [unowned self] in self.reports.append($0) }
    }

    /// Every report since the last call.
    func take() -> [ContextChanges] {
        defer { reports = [] }
        return reports
    }
}

/// A root context over a fresh in-memory store holding course "SAVED" (5 credits).
private struct Fixture {
    let container: ModelContainer
    let root: ObjectContext
    let saved: Course

    init() throws {
        container = try ModelContainer(inMemoryWith: TestModels.school)
        root = container.newBackgroundContext(name: "root")
        saved = Course()
        root.insert(saved)
        saved.code = "SAVED"
        try root.save()
    }
}

@Suite("A context reports its unsaved changes when it processes them")
struct ContextProcessedChangesTests {
    @Test func insertsUpdatesAndDeletesAreReportedOnceEach() throws {
        let fixture = try Fixture()
        let root = fixture.root
        let recorder = Recorder(root)
        let added = Course()
        root.insert(added)
        added.code = "ADDED"
        fixture.saved.credits = 9
        root.processPendingChanges()
        let first = try #require(recorder.take().only)
        #expect(first.reason == .processed && first.contextName == "root")
        #expect(first.insertedIDs == [added.objectID] && first.insertedIDs[0].isTemporary)
        #expect(first.updatedIDs == [fixture.saved.objectID])
        let update = try #require(first.changes.first { $0.kind == .updated })
        #expect(update.changedKeys == ["credits"] && update.values["credits"] == .attribute(.int32(9)))

        root.processPendingChanges()
        #expect(recorder.take().isEmpty, "nothing changed since the last report")

        added.credits = 3
        root.delete(fixture.saved)
        root.processPendingChanges()
        let second = try #require(recorder.take().only)
        #expect(second.updatedIDs == [added.objectID], "an insert changed after its report is an update")
        #expect(second.changes.first?.changedKeys == ["credits"])
        #expect(second.deletedIDs == [fixture.saved.objectID])
    }

    @Test func aSaveProcessesFirstThenReportsWhatItCommittedWithPermanentIDs() throws {
        let fixture = try Fixture()
        let root = fixture.root
        let recorder = Recorder(root)
        let added = Course()
        root.insert(added)
        added.code = "ADDED"
        let temporary = added.objectID
        try root.save()
        let reports = recorder.take()
        #expect(reports.map(\.reason) == [.processed, .saved(transactionID: fixture.container.lastTransactionID)])
        #expect(reports.first?.insertedIDs == [temporary])
        #expect(reports.last?.insertedIDs == [added.objectID] && added.objectID.isTemporary == false)
        #expect(reports.last?.insertedIDs.first?.permanentForm == temporary.permanentForm)
        #expect(reports.last?.changes.first?.values["code"] == .attribute(.string("ADDED")))
    }

    @Test func aRollbackReportsWhatItUndid() throws {
        let fixture = try Fixture()
        let root = fixture.root
        let recorder = Recorder(root)
        let added = Course()
        root.insert(added)
        added.code = "ADDED"
        fixture.saved.credits = 9
        root.processPendingChanges()
        let addedID = added.objectID
        _ = recorder.take()
        root.rollback()
        let undone = try #require(recorder.take().only)
        #expect(undone.reason == .rolledBack)
        #expect(undone.deletedIDs == [addedID])
        #expect(undone.updatedIDs == [fixture.saved.objectID])
        #expect(undone.changes.first { $0.kind == .updated }?.values["credits"] == .attribute(.int32(5)))
    }

    @Test func aCancelledObservationHearsNothing() throws {
        let fixture = try Fixture()
        let recorder = Recorder(fixture.root)
        recorder.observation?.cancel()
        fixture.saved.credits = 8
        try fixture.root.save()
        #expect(recorder.take().isEmpty)
    }
}

@Suite("A child's save into its parent is a change of the parent")
struct ContextPushedChangesTests {
    @Test func theParentReportsItsOwnChangesApartFromThePush() throws {
        let fixture = try Fixture()
        let root = fixture.root
        let recorder = Recorder(root)
        let own = Course()
        root.insert(own)
        own.code = "OWN"
        let child = root.makeChildContext(name: "child")
        let childRecorder = Recorder(child)
        let pushed = Course()
        child.insert(pushed)
        pushed.code = "PUSHED"
        try #require(child.object(with: fixture.saved.objectID) as? Course).credits = 2
        try child.save()

        let reports = recorder.take()
        #expect(reports.map(\.reason) == [.processed, .pushedByChild])
        #expect(reports.first?.insertedIDs == [own.objectID])
        #expect(Set(reports.last?.insertedIDs ?? []) == [pushed.objectID])
        #expect(reports.last?.updatedIDs == [fixture.saved.objectID])
        #expect(childRecorder.take().map(\.reason) == [.processed, .saved(transactionID: nil)])
        #expect(root.insertedObjects.count == 2 && fixture.saved.credits == 2)
    }
}

@Suite("A context's changes as an asynchronous sequence")
struct ContextChangesSequenceTests {
    @Test func theSequenceDeliversEveryReportInOrder() async throws {
        let fixture = try Fixture()
        let root = fixture.root
        let stream = root.changes
        fixture.saved.credits = 7
        root.processPendingChanges()
        try root.save()
        var reasons: [ContextChanges.Reason] = []
        for await changes in stream {
            reasons.append(changes.reason)
            if reasons.count == 2 { break }
        }
        #expect(reasons == [.processed, .saved(transactionID: fixture.container.lastTransactionID)])
    }
}

extension Array {
    /// The single element, or `nil` when there are none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
