import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// The single observation point (``CommitObservers``): every committed transaction reaches every observer once, in
/// transaction order, after it is visible to other contexts, and says what it changed.
@Suite("Commit observation point")
struct CommitObservationTests {
    /// What the observers of one store saw.
    private final class Seen: Sendable {
        let transactions = LockedValue<[CommittedTransaction]>([])
        /// Transactions delivered before the store's committed state held them.
        let earlyDeliveries = LockedValue<[UInt64]>([])

        func observer(of store: Store) -> CommitObservers.Observer {
            { transaction in
                if store.lastTransactionID < transaction.transactionID {
                    self.earlyDeliveries.withLock { $0.append(transaction.transactionID) }
                }
                self.transactions.withLock { $0.append(transaction) }
            }
        }

        var ids: [UInt64] { transactions.withLock { $0.map(\.transactionID) } }
    }

    /// The objects one thread inserted and deleted, by the permanent IDs its saves gave them.
    private struct Outcome: Sendable {
        var inserted: Set<ObjectID> = []
        var deleted: Set<ObjectID> = []
    }

    @Test("concurrent saves from several contexts reach the observer once each, in order, as the log holds them")
    func concurrentSavesAreObservedInOrder() throws {
        let seed = TestSeed.make()
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let store = container.store
        let setup = container.newBackgroundContext(name: "setup")
        let course = Course()
        setup.insert(course)
        course.code = "SHARED"
        try setup.save()
        let courseID = course.objectID
        let seen = Seen()
        let (_, registeredAfter) = store.observeCommits(seen.observer(of: store))
        let outcomes = LockedValue<[Outcome]>([])
        let threadCount = 4
        onThreads(threadCount) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            let context = container.newBackgroundContext(name: "worker \(thread)")
            let shared = context.object(with: courseID) as? Course
            var mine: [Student] = []
            var outcome = Outcome()
            for save in 0..<15 {
                var inserted: [Student] = []
                for index in 0..<Int.random(in: 1...3, using: &random) {
                    let student = Student()
                    context.insert(student)
                    student.name = "t\(thread)-s\(save)-\(index)"
                    if Bool.random(using: &random), let shared { student.courses = [shared] }
                    inserted.append(student)
                }
                if !mine.isEmpty, Bool.random(using: &random) {
                    mine[Int.random(in: 0..<mine.count, using: &random)].year += 1
                }
                var deleted: ObjectID?
                if mine.count > 2, Int.random(in: 0..<4, using: &random) == 0 {
                    let victim = mine.remove(at: Int.random(in: 0..<mine.count, using: &random))
                    deleted = victim.objectID
                    context.delete(victim)
                }
                do {
                    try context.save()
                } catch {
                    Issue.record("save \(save) of thread \(thread) failed: \(error)")
                    return
                }
                mine += inserted
                outcome.inserted.formUnion(inserted.map(\.objectID))
                if let deleted { outcome.deleted.insert(deleted) }
            }
            outcomes.withLock { $0.append(outcome) }
        }
        let lastID = container.lastTransactionID
        #expect(seen.ids == Array(registeredAfter + 1...lastID), "each transaction once, in transaction order")
        #expect(seen.earlyDeliveries.withLock { $0 }.isEmpty, "delivered only once visible to every context")
        let observed = seen.transactions.withLock { $0 }
        let expected = outcomes.withLock { $0 }
        func objects(_ kind: CommittedTransaction.Change.Kind) -> Set<ObjectID> {
            Set(observed.flatMap { $0.changes.filter { $0.kind == kind }.map(\.objectID) })
        }
        #expect(objects(.inserted) == expected.reduce(into: Set()) { $0.formUnion($1.inserted) })
        #expect(objects(.deleted) == expected.reduce(into: Set()) { $0.formUnion($1.deleted) })
        #expect(observed.allSatisfy { $0.author.hasPrefix("worker ") })
        try container.close()

        // The log is the reference: the observed values are what its changesets say, transaction by transaction.
        var logged: [CommittedTransaction] = []
        try LogReader(path: directory.file()).scan { record in
            guard case .transaction(let transaction) = record, transaction.transactionID > registeredAfter else {
                return
            }
            logged.append(
                CommittedTransaction(try transaction.changeset(), model: store.model, storeUUID: store.storeUUID))
        }
        #expect(observed == logged)
    }

    @Test("an observer sees the transactions installed between its registration and its removal")
    func registrationAndRemovalBoundTheFeed() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let store = container.store
        let context = container.newBackgroundContext()
        func saveCourse(_ code: String) throws {
            let course = Course()
            context.insert(course)
            course.code = code
            try context.save()
        }
        try saveCourse("BEFORE")
        let seen = Seen()
        let (token, registeredAfter) = store.observeCommits(seen.observer(of: store))
        #expect(registeredAfter == container.lastTransactionID)
        try saveCourse("ONE")
        try saveCourse("TWO")
        store.removeCommitObserver(token)
        try saveCourse("AFTER")
        #expect(seen.ids == [registeredAfter + 1, registeredAfter + 2])
    }

    @Test("inserts, updates (with the changed keys), relationship changes and deletes are described")
    func changesNameObjectsAndKeys() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let seen = Seen()
        _ = container.store.observeCommits(seen.observer(of: container.store))
        let context = container.newBackgroundContext(name: "describer")
        let course = Course()
        context.insert(course)
        course.code = "C"
        let student = Student()
        context.insert(student)
        student.name = "Ada"
        try context.save()
        student.year = 2
        student.courses = [course]
        try context.save()
        context.delete(student)
        try context.save()

        let transactions = seen.transactions.withLock { $0 }
        try #require(transactions.count == 3)
        func change(_ index: Int, _ id: ObjectID) -> CommittedTransaction.Change? {
            transactions[index].changes.first { $0.objectID == id }
        }
        #expect(transactions.allSatisfy { $0.author == "describer" })
        let inserted = try #require(change(0, student.objectID))
        #expect(inserted.kind == .inserted)
        #expect(inserted.changedKeys.contains("name"))
        #expect(change(0, course.objectID)?.kind == .inserted)
        #expect(
            change(1, student.objectID)
                == .init(
                    objectID: student.objectID, kind: .updated, changedKeys: ["year", "courses"],
                    values: ["year": .attribute(.int16(2))]),
            "a to-many set by adding targets has no value in a notification: the log holds only the difference")
        #expect(
            change(1, course.objectID) == .init(objectID: course.objectID, kind: .updated, changedKeys: ["members"]),
            "the inverse side")
        #expect(change(2, student.objectID)?.kind == .deleted)
        #expect(change(2, student.objectID)?.changedKeys == [])
    }

    @Test("an observer may save: its transaction is delivered after the one being delivered, without deadlock")
    func anObserverThatSavesDoesNotDeadlock() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let seen = Seen()
        let store = container.store
        let savedFromObserver = LockedValue(false)
        _ = store.observeCommits { transaction in
            seen.observer(of: store)(transaction)
            guard
                savedFromObserver.withLock({ done in
                    defer { done = true }; return !done
                })
            else { return }
            let context = container.newBackgroundContext(name: "observer")
            let course = Course()
            context.insert(course)
            course.code = "FROM-OBSERVER"
            #expect(throws: Never.self) { try context.save() }
        }
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "FIRST"
        try context.save()
        #expect(seen.ids == [1, 2])
        #expect(seen.transactions.withLock { $0.map(\.author) } == ["background", "observer"])
    }
}
