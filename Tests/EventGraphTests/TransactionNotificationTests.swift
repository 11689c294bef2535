import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// The container's change notifications: every committed transaction from any context, once each, in order, as
/// values (IDs, keys, new values), through a callback and through an `AsyncSequence`.
@Suite("Container change notifications")
struct TransactionNotificationTests {
    @Test("concurrent saves reach the handler once each, in transaction order, with the values they saved")
    func concurrentSavesAreNotifiedInOrder() throws {
        let seed = TestSeed.make()
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let received = LockedValue<[CommittedTransaction]>([])
        let observation = container.observeTransactions { transaction in
            received.withLock { $0.append(transaction) }
        }
        let savedNames = LockedValue<[ObjectID: String]>([:])
        onThreads(4) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            let context = container.newBackgroundContext(name: "worker \(thread)")
            for save in 0..<12 {
                let name = "t\(thread)-\(save)-\(UInt16.random(in: 0...UInt16.max, using: &random))"
                do {
                    let student = try Student.insertSaved(name, in: context)
                    savedNames.withLock { $0[student.objectID] = name }
                } catch {
                    Issue.record("save \(save) of thread \(thread) failed: \(error)")
                }
            }
        }
        let transactions = received.withLock { $0 }
        let first = observation.registeredAfterTransaction + 1
        #expect(transactions.map(\.transactionID) == Array(first...container.lastTransactionID))
        var notifiedNames: [ObjectID: String] = [:]
        for change in transactions.flatMap(\.changes) {
            #expect(change.kind == .inserted)
            if case .attribute(.string(let name)) = change.values["name"] { notifiedNames[change.objectID] = name }
        }
        #expect(notifiedNames == savedNames.withLock { $0 }, "each insert carries the name its save gave")
        #expect(transactions.allSatisfy { $0.author.hasPrefix("worker ") })
    }

    @Test("an update carries the changed keys and new values; a delete carries none; time and author are set")
    func changesCarryValues() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let received = LockedValue<[CommittedTransaction]>([])
        let observation = container.observeTransactions { transaction in received.withLock { $0.append(transaction) } }
        let context = container.newBackgroundContext(name: "editor")
        let course = Course()
        context.insert(course)
        course.code = "MATH"
        let student = try Student.insertSaved("Ada", in: context)
        student.year = 3
        student.courses = [course]
        try context.save()
        context.delete(student)
        try context.save()
        withExtendedLifetime(observation) {}

        let transactions = received.withLock { $0 }
        try #require(transactions.count == 3)
        let inserted = try #require(transactions[0].changes.first { $0.objectID == course.objectID })
        #expect(inserted.values["code"] == .attribute(.string("MATH")))
        let updated = try #require(transactions[1].changes.first { $0.objectID == student.objectID })
        #expect(updated.kind == .updated)
        #expect(updated.changedKeys == ["year", "courses"])
        #expect(updated.values["year"] == .attribute(.int16(3)))
        #expect(updated.oldValues.isEmpty, "old values come from the change feed only")
        let deleted = try #require(transactions[2].changes.first { $0.objectID == student.objectID })
        #expect(deleted.kind == .deleted && deleted.values.isEmpty && deleted.changedKeys.isEmpty)
        #expect(transactions.allSatisfy { $0.author == "editor" })
        #expect(abs(transactions[0].commitTime.timeIntervalSinceNow) < 3600, "a commit time near now, not 0")
    }

    @Test("a cancelled or released observation is no longer called")
    func cancellationStopsDelivery() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext()
        let cancelledCount = LockedValue(0)
        let releasedCount = LockedValue(0)
        let cancelled = container.observeTransactions { _ in cancelledCount.withLock { $0 += 1 } }
        var released: TransactionObservation? = container.observeTransactions { _ in
            releasedCount.withLock { $0 += 1 }
        }
        _ = try Student.insertSaved("one", in: context)
        cancelled.cancel()
        released = nil
        _ = try Student.insertSaved("two", in: context)
        #expect(released == nil)
        #expect(cancelledCount.withLock { $0 } == 1)
        #expect(releasedCount.withLock { $0 } == 1)
    }

    @Test("the AsyncSequence yields the transactions committed after it was made, in order")
    func asyncSequenceYieldsInOrder() async throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext(name: "before")
        _ = try Student.insertSaved("before", in: context)
        let stream = container.transactions
        let names = ["a", "b", "c", "d"]
        let saver = Thread {
            let context = container.newBackgroundContext(name: "saver")
            for name in names { _ = try? Student.insertSaved(name, in: context) }
        }
        saver.start()
        var received: [CommittedTransaction] = []
        for await transaction in stream {
            received.append(transaction)
            if received.count == names.count { break }
        }
        #expect(received.map(\.transactionID) == [2, 3, 4, 5])
        #expect(received.map(\.author) == Array(repeating: "saver", count: names.count))
        let receivedNames = received.compactMap { $0.changes.first?.values["name"] }
        #expect(receivedNames == names.map { .attribute(.string($0)) })
    }
}
