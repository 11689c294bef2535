import Foundation
import Testing

@testable import EventGraph

/// Two root contexts on one store holding courses "A" and "B" (5 credits each), both registered in the first one.
private struct TwoContexts {
    let container: ModelContainer
    let merging: ObjectContext
    let other: ObjectContext
    let a: Course
    let b: Course

    init(mergePolicy: MergePolicy = .error) throws {
        container = try ModelContainer(inMemoryWith: TestModels.school)
        merging = container.newBackgroundContext(name: "merging")
        merging.mergePolicy = mergePolicy
        other = container.newBackgroundContext(name: "other")
        a = Course()
        merging.insert(a)
        a.code = "A"
        b = Course()
        merging.insert(b)
        b.code = "B"
        try merging.save()
        _ = (a.credits, b.credits)
    }

    /// Sets credits of A, and deletes B, in the other context.
    func changeElsewhere(credits: Int32) throws {
        try #require(other.object(with: a.objectID) as? Course).credits = credits
        other.delete(try #require(other.object(with: b.objectID)))
        try other.save()
    }
}

@Suite("A root context merges other contexts' transactions automatically")
struct RootContextMergingTests {
    @Test(arguments: [false, true]) func registeredObjectsTakeNewValuesAndDeletes(merges: Bool) throws {
        let fixture = try TwoContexts()
        fixture.merging.automaticallyMergesChangesFromParent = merges
        var reports: [ContextChanges] = []
        let observation = fixture.merging.observeChanges { reports.append($0) }
        try fixture.changeElsewhere(credits: 12)
        fixture.merging.processPendingChanges()
        if merges {
            #expect(fixture.a.credits == 12)
            #expect(fixture.b.isDeleted)
            let merged = try #require(reports.first)
            #expect(merged.reason == .merged(transactionID: fixture.container.lastTransactionID))
            #expect(merged.updatedIDs == [fixture.a.objectID] && merged.deletedIDs == [fixture.b.objectID])
        } else {
            #expect(fixture.a.credits == 5, "without merging, a registered object keeps what it read")
            #expect(!fixture.b.isDeleted)
            #expect(reports.isEmpty)
        }
        observation.cancel()
    }

    @Test(arguments: [MergePolicy.objectWins, .storeWins, .error])
    func unsavedChangesAreKeptByTheMergePolicy(policy: MergePolicy) throws {
        let fixture = try TwoContexts(mergePolicy: policy)
        fixture.merging.automaticallyMergesChangesFromParent = true
        fixture.a.credits = 3
        try fixture.changeElsewhere(credits: 12)
        fixture.merging.processPendingChanges()
        switch policy {
        case .objectWins:
            #expect(fixture.a.credits == 3)
            try fixture.merging.save()
        case .storeWins:
            #expect(fixture.a.credits == 12)
            #expect(!fixture.a.hasChanges)
        case .error:
            #expect(fixture.a.credits == 3)
            #expect(throws: EventGraphError.self, "the save reports the conflict") { try fixture.merging.save() }
        }
        let reader = fixture.container.newBackgroundContext()
        let stored = try #require(reader.object(with: fixture.a.objectID) as? Course)
        #expect(stored.credits == (policy == .objectWins ? 3 : 12))
    }

    @Test func ownTransactionsAreNotMergedBack() throws {
        let fixture = try TwoContexts()
        fixture.merging.automaticallyMergesChangesFromParent = true
        var reasons: [ContextChanges.Reason] = []
        let observation = fixture.merging.observeChanges { reasons.append($0.reason) }
        fixture.a.credits = 7
        try fixture.merging.save()
        fixture.merging.processPendingChanges()
        #expect(reasons == [.processed, .saved(transactionID: fixture.container.lastTransactionID)])
        observation.cancel()
    }
}

@Suite("A child merges changes of its parent automatically")
struct ChildContextMergingTests {
    @Test(arguments: [false, true]) func aSiblingsPushAndTheParentsDeleteReachTheChild(merges: Bool) throws {
        let fixture = try TwoContexts()
        let root = fixture.merging
        let child = root.makeChildContext(name: "child")
        child.automaticallyMergesChangesFromParent = merges
        let sibling = root.makeChildContext(name: "sibling")
        let seenA = try #require(child.object(with: fixture.a.objectID) as? Course)
        let seenB = try #require(child.object(with: fixture.b.objectID) as? Course)
        _ = (seenA.credits, seenB.credits)

        try #require(sibling.object(with: fixture.a.objectID) as? Course).credits = 20
        try sibling.save()
        #expect(seenA.credits == (merges ? 20 : 5))

        root.delete(fixture.b)
        root.processPendingChanges()
        #expect(seenB.isDeleted == merges)
        try root.save()
        #expect(fixture.container.lastTransactionID == 2)
    }

    @Test func aChildsOwnPushIsNotMergedBack() throws {
        let fixture = try TwoContexts()
        let child = fixture.merging.makeChildContext(name: "child")
        child.automaticallyMergesChangesFromParent = true
        var reasons: [ContextChanges.Reason] = []
        let observation = child.observeChanges { reasons.append($0.reason) }
        try #require(child.object(with: fixture.a.objectID) as? Course).credits = 9
        try child.save()
        #expect(reasons == [.processed, .saved(transactionID: nil)])
        observation.cancel()
    }
}
