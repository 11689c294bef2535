import Testing

@testable import EventGraph

/// The main context, set to merge, merges another context's save on the main actor as it arrives, as Core Data's
/// main-queue context does: the application need not call `processPendingChanges()` for its objects to change. It
/// merged only at its next processing point.
@Suite("The main context merges on the main actor as saves arrive")
@MainActor
struct MainContextMergeTests {
    @Test(.timeLimit(.minutes(1))) func anUpdateElsewhereReachesAHeldObject() async throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let main = container.mainContext
        main.automaticallyMergesChangesFromParent = true
        let course = Course()
        main.insert(course)
        course.code = "SE1"
        try main.save()
        var reports = main.changes.makeAsyncIterator()

        let other = container.newBackgroundContext(name: "other")
        let theirs = try #require(other.object(with: course.objectID) as? Course)
        theirs.credits = 9
        try other.save()

        // Without a merge on the main actor, no report ever comes, and the time limit fails the test.
        let report = try #require(await reports.next())
        #expect(report.reason == .merged(transactionID: container.lastTransactionID))
        #expect(report.updatedIDs == [course.objectID])
        #expect(course.credits == 9)
    }
}
