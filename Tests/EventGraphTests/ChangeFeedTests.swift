import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// The persistent change feed, `changes(after:)`: the transactions after a token, from the log, with old values;
/// resumable after a restart; a clear error, never a gap, once a compaction dropped the history asked for.
@Suite("Persistent change feed")
struct ChangeFeedTests {
    /// The transaction without its old values: what a notification of it says.
    private static func withoutOldValues(_ transaction: CommittedTransaction) -> CommittedTransaction {
        var copy = transaction
        for index in copy.changes.indices { copy.changes[index].oldValues = [:] }
        return copy
    }

    @Test("updates carry old and new values, deletes every old value, a to-many its complete new contents")
    func oldAndNewValues() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext(name: "registrar")
        let course = Course()
        context.insert(course)
        course.code = "MATH"
        let student = try Student.insertSaved("Ada", in: context)
        student.name = "Grace"
        student.courses = [course]
        try context.save()
        context.delete(student)
        try context.save()

        let feed = try container.changes(after: 1)
        #expect(feed.map(\.transactionID) == [2, 3])
        let update = try #require(feed[0].changes.first { $0.objectID == student.objectID })
        #expect(update.oldValues["name"] == .attribute(.string("Ada")))
        #expect(update.values["name"] == .attribute(.string("Grace")))
        #expect(update.oldValues["courses"] == .toMany([]))
        #expect(update.values["courses"] == .toMany([course.objectID]))
        let inverse = try #require(feed[0].changes.first { $0.objectID == course.objectID })
        #expect(inverse.changedKeys == ["members"])
        #expect(inverse.values["members"] == .toMany([student.objectID]), "complete, though the log has a diff")
        let delete = try #require(feed[1].changes.first { $0.objectID == student.objectID })
        #expect(delete.kind == .deleted && delete.values.isEmpty)
        #expect(delete.oldValues["name"] == .attribute(.string("Grace")))
        #expect(delete.oldValues["year"] == .attribute(.int16(1)), "a default the log never recorded")
        #expect(delete.oldValues["courses"] == .toMany([course.objectID]))
        #expect(try container.changes(after: 3).isEmpty)
    }

    @Test("a seeded concurrent workload: the feed agrees with the notifications and its old values chain up")
    func feedMatchesNotifications() throws {
        let seed = TestSeed.make()
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let notified = LockedValue<[CommittedTransaction]>([])
        let observation = container.observeTransactions { transaction in notified.withLock { $0.append(transaction) } }
        onThreads(3) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            let context = container.newBackgroundContext(name: "worker \(thread)")
            var mine: [Student] = []
            for save in 0..<15 {
                do {
                    mine.append(try Student.insertSaved("t\(thread)-\(save)", in: context))
                    if Bool.random(using: &random) {
                        mine[Int.random(in: 0..<mine.count, using: &random)].year += 1
                    }
                    if mine.count > 2, Int.random(in: 0..<3, using: &random) == 0 {
                        context.delete(mine.remove(at: Int.random(in: 0..<mine.count, using: &random)))
                    }
                    try context.save()
                } catch {
                    Issue.record("save \(save) of thread \(thread) failed: \(error)")
                }
            }
        }
        withExtendedLifetime(observation) {}
        let feed = try container.changes(after: 0)
        #expect(feed.map(Self.withoutOldValues) == notified.withLock { $0 }, "attribute-only changes: the same")

        // Each old value is the value the previous transactions left.
        var state: [ObjectID: [String: ObjectValue]] = [:]
        for change in feed.flatMap(\.changes) {
            for (key, old) in change.oldValues {
                #expect(state[change.objectID]?[key].map { $0 == old } ?? true, "\(change.objectID) \(key)")
            }
            if change.kind == .deleted {
                state[change.objectID] = nil
            } else {
                state[change.objectID, default: [:]].merge(change.values) { $1 }
            }
        }
    }

    @Test("resumed after a restart, and in another process, it returns exactly the missing transactions")
    func resumesAfterRestart() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        var notified: [CommittedTransaction] = []
        do {
            let container = try ModelContainer(path: path, model: TestModels.school)
            let received = LockedValue<[CommittedTransaction]>([])
            let observation = container.observeTransactions { transaction in
                received.withLock { $0.append(transaction) }
            }
            let context = container.newBackgroundContext(name: "app")
            let student = try Student.insertSaved("Ada", in: context)
            _ = try Student.insertSaved("Alan", in: context)
            student.name = "Grace"
            try context.save()
            withExtendedLifetime(observation) {}
            notified = received.withLock { $0 }
            try container.close()
        }
        // The consumer had processed transaction 1 when the app stopped; another launch then saved transaction 4.
        let inserted = try StoreProbe.run("open-insert", path: path)
        #expect(inserted.status == 0, "\(inserted.output)")

        let reopened = try ModelContainer(path: path, model: TestModels.school)
        let feed = try reopened.changes(after: 1)
        #expect(feed.map(\.transactionID) == [2, 3, 4])
        #expect(Array(feed.prefix(2).map(Self.withoutOldValues)) == Array(notified.dropFirst()))
        let rename = try #require(feed[1].changes.first)
        #expect(rename.oldValues["name"] == .attribute(.string("Ada")))
        try reopened.close()

        let probe = try StoreProbe.run("changes-after-1", path: path)
        #expect(probe.status == 0, "\(probe.output)")
        let lines = probe.output.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("transaction ") }.map { $0.split(separator: " ")[1] } == ["2", "3", "4"])
        #expect(lines.contains { $0.contains("updated Student/") && $0.contains("Ada") && $0.contains("Grace") })
    }

    @Test("after a compaction, asking for dropped history is an error naming the first transaction kept")
    func compactedHistoryIsAnError() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext()
        let student = try Student.insertSaved("Ada", in: context)
        _ = try Student.insertSaved("Alan", in: context)
        try container.compact()
        for token: UInt64 in [0, 1] {
            let error = #expect(throws: EventGraphError.self) { try container.changes(after: token) }
            #expect(error?.code == .historyCompacted)
            let message = error?.message ?? ""
            #expect(message.contains("history compacted before transaction 3"), "\(message)")
        }
        #expect(try container.changes(after: 2).isEmpty, "nothing was dropped after the checkpoint")
        student.name = "Grace"
        try context.save()
        let feed = try container.changes(after: 2)
        #expect(feed.map(\.transactionID) == [3])
        #expect(feed.first?.changes.first?.oldValues["name"] == .attribute(.string("Ada")), "from the checkpoint")
    }

    @Test("a token later than the last transaction is refused")
    func tokenFromTheFutureIsRefused() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        _ = try Student.insertSaved("Ada", in: container.newBackgroundContext())
        let error = #expect(throws: EventGraphError.self) { try container.changes(after: 2) }
        #expect(error?.code == .invalidArgument)
    }
}
