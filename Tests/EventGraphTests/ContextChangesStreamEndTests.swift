import Testing

@testable import EventGraph

/// A context's `changes` sequence registers an observer; when its consumer is gone, the registration goes at the
/// context's next processing point, not at the next change (until then every change paid for a report nobody
/// reads, and the stream's buffer stayed alive).
@Suite("A change stream's registration ends with its consumer")
struct ContextChangesStreamEndTests {
    enum End: String, CaseIterable {
        case taskCancelled, sequenceReleased
    }

    @Test(arguments: End.allCases) func theRegistrationIsRemovedWithoutAChange(end: End) async throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext(name: "viewer")
        switch end {
        case .taskCancelled:
            let stream = context.changes
            let consumer = Task {
                for await _ in stream {}
            }
            consumer.cancel()
            await consumer.value
        case .sequenceReleased:
            _ = context.changes
        }
        #expect(context.changeTracking.observers.count == 1, "registered until the context next looks")
        context.processPendingChanges()
        #expect(context.changeTracking.observers.isEmpty)
        #expect(!context.changeTracking.hasObservers)
    }

    @Test func aLiveConsumerKeepsItsRegistrationAndReceivesReports() async throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext(name: "writer")
        var iterator = context.changes.makeAsyncIterator()
        let course = Course()
        context.insert(course)
        course.code = "LIVE"
        try context.save()
        #expect(context.changeTracking.hasObservers)
        let first = await iterator.next()
        #expect(first?.insertedIDs.count == 1)
    }
}
