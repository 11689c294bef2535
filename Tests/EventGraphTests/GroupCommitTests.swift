import Dispatch
import Foundation
import LogFormat
import Testing

@testable import EventGraph

@Suite("Group commit")
struct GroupCommitTests {
    @Test func concurrentSavesShareSyncsAndAllSurviveReopen() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration(durability: .full)
        configuration.faultInjector = faults
        let container = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: configuration)
        let syncsBefore = faults.callCount(.sync)
        let threadCount = 8
        let savesPerThread = 100
        let errors = LockedValue<[String]>([])
        onThreads(threadCount) { thread in
            let context = container.newBackgroundContext(name: "writer \(thread)")
            for save in 0..<savesPerThread {
                let course = Course()
                context.insert(course)
                course.code = "T\(thread)-S\(save)"
                course.credits = Int32(save % 30)
                do { try context.save() } catch { errors.withLock { $0.append("\(error)") } }
            }
        }
        #expect(errors.withLock { $0 }.isEmpty)
        let saveCount = threadCount * savesPerThread
        let syncs = faults.callCount(.sync) - syncsBefore
        print("group commit: \(saveCount) saves, \(syncs) fdatasyncs")
        #expect(syncs < saveCount)
        #expect(container.lastTransactionID == UInt64(saveCount))
        try container.close()

        let reopened = try ModelContainer(path: directory.file(), model: TestModels.school)
        let courses = try reopened.newBackgroundContext().fetch(FetchDescriptor<Course>())
        let codes = Set(courses.map(\.code))
        #expect(codes.count == saveCount)
        #expect(codes.contains("T7-S99") && codes.contains("T0-S0"))
        try reopened.close()
    }

    @Test func concurrentSavesStillDetectUniquenessAcrossQueuedSaves() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let outcomes = LockedValue<(saved: Int, refused: Int)>((0, 0))
        onThreads(6) { _ in
            let context = container.newBackgroundContext()
            for save in 0..<40 {
                let course = Course()
                context.insert(course)
                course.code = "shared-\(save)"
                do {
                    try context.save()
                    outcomes.withLock { $0.saved += 1 }
                } catch {
                    outcomes.withLock { $0.refused += 1 }
                    context.rollback()
                }
            }
        }
        // Each code is saved exactly once, whichever thread won.
        #expect(outcomes.withLock { $0.saved } == 40)
        #expect(outcomes.withLock { $0.refused } == 200)
        let codes = try container.newBackgroundContext().fetch(FetchDescriptor<Course>()).map(\.code)
        #expect(codes.count == 40 && Set(codes).count == 40)
        try container.close()
    }

    @Test func aFailedSyncRefusesLaterSavesAndReopeningRecovers() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration(durability: .full)
        configuration.faultInjector = faults
        do {
            let container = try ModelContainer(
                path: directory.file(), model: TestModels.school, configuration: configuration)
            let context = container.newBackgroundContext()
            let first = Course()
            context.insert(first)
            first.code = "kept"
            try context.save()
            faults.arm(.sync, onCall: 1, fault: .fail(errno: EIO))
            let second = Course()
            context.insert(second)
            second.code = "lost"
            #expect(throws: EventGraphError.self) { try context.save() }
            // Other contexts never see the save whose sync failed.
            #expect(try container.newBackgroundContext().fetch(FetchDescriptor<Course>()).map(\.code) == ["kept"])
            let other = container.newBackgroundContext()
            let third = Course()
            other.insert(third)
            third.code = "refused"
            let error = #expect(throws: EventGraphError.self) { try other.save() }
            #expect(error?.message.contains("reopen") == true)
            try? container.close()
        }
        let reopened = try ModelContainer(path: directory.file(), model: TestModels.school)
        let codes = try reopened.newBackgroundContext().fetch(FetchDescriptor<Course>()).map(\.code)
        #expect(codes.first == "kept")
        let context = reopened.newBackgroundContext()
        let fourth = Course()
        context.insert(fourth)
        fourth.code = "after reopen"
        try context.save()
        try reopened.close()
    }
}
