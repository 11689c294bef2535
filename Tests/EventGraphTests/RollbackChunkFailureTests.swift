import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A rollback over an object whose checkpoint chunk was evicted and cannot be read again.
///
/// A rollback reports the updates it undoes with the committed values the objects hold again
/// (``ContextChanges/Reason/rolledBack``), read from their chunks. Before, that read was a property getter's
/// (`LazyColumnChunk.columns(readingProperty:)`), which ends the process when the chunk cannot be read; now the
/// rollback completes, its report names the object and its changed keys but leaves out the values it could not read
/// (as it does for an object that holds no committed values), and the object reads its committed values once reads
/// succeed.
@Suite("A rollback over a checkpoint chunk that cannot be read again")
struct RollbackChunkFailureTests {
    typealias Helpers = ChildContextChunkFailureTests

    /// Gives `student` a year one past its committed one, processed (reported) but not saved; returns the committed.
    private static func changeYear(of student: Student, in context: ObjectContext) -> Int16 {
        let year = student.year
        student.year = year + 1
        context.processPendingChanges()
        return year
    }

    @Test func aRollbackLeavesOutTheValuesItCannotRead() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, context, student, box) = try Helpers.openWithAStudentOfChunk1(in: directory, faults: faults)
        defer { try? container.close() }
        let reports = LockedValue<[ContextChanges]>([])
        let observation = context.observeChanges { report in reports.withLock { $0.append(report) } }
        defer { observation.cancel() }
        let year = Self.changeYear(of: student, in: context)
        #expect(reports.withLock { $0.map(\.updatedIDs) } == [[student.objectID]])
        try Helpers.evictChunk1(of: container, box)

        Helpers.failEveryRead(of: box, after: 0, faults)
        context.rollback()
        #expect(faults.failedReadCount > 0)
        #expect(!context.hasChanges)
        #expect(box.pinCount == 0)
        let undone = try #require(reports.withLock { $0.last })
        #expect(undone.reason == .rolledBack)
        #expect(undone.updatedIDs == [student.objectID])
        #expect(undone.changes.count == 1)
        let change = try #require(undone.changes.first)
        #expect(change.changedKeys == ["year"])
        #expect(change.values.isEmpty, "\(change.values)")

        Helpers.stopFailingReads(faults)
        #expect(student.year == year)
        #expect(!student.hasChanges)
    }

    @Test func aRollbackOverAReadableChunkReportsTheValuesItRestores() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, context, student, box) = try Helpers.openWithAStudentOfChunk1(in: directory, faults: faults)
        defer { try? container.close() }
        let reports = LockedValue<[ContextChanges]>([])
        let observation = context.observeChanges { report in reports.withLock { $0.append(report) } }
        defer { observation.cancel() }
        let year = Self.changeYear(of: student, in: context)
        try Helpers.evictChunk1(of: container, box)

        context.rollback()
        let change = try #require(reports.withLock { $0.last?.changes.first })
        #expect(change.values["year"] == .attribute(.int16(year)), "\(change.values)")
        #expect(box.pinCount == 0)
        #expect(faults.failedReadCount == 0)
    }
}

/// A child's save ends by giving each object it saved the row its parent now serves. For an object the push returned
/// no row for (a relationship set to the targets it holds: listed as updated, no operation; a child pushes every
/// attribute it set, even to the value it read), that row is looked up in the parent,
/// whose own object may read a checkpoint chunk evicted since and unreadable now. Before, that lookup ended the
/// process (`Store.failLookUp`, from `ParentContextStore.row(of:entityIndex:)` in `finishSave`); now the child's
/// object becomes a fault, as a child's merge leaves it (``MergeChunkFailureTests``), and reads the parent's values
/// once reads succeed.
@Suite("A child's save over a parent's checkpoint chunk that cannot be read again")
struct ChildSaveFallbackChunkFailureTests {
    typealias Helpers = ChildContextChunkFailureTests

    @Test func aChildsUnchangedUpdateOverAnUnreadableParentChunkLeavesAFault() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, parent, student, box) = try Helpers.openWithAStudentOfChunk1(in: directory, faults: faults)
        defer { try? container.close() }
        // The parent changed the student: it serves its child a row of its own values over its chunk's.
        student.year = 9
        let child = parent.makeChildContext()
        let mine = try #require(child.object(with: student.objectID) as? Student)
        let (name, courses) = (mine.name, mine.courses)
        #expect(mine.year == 9)
        try Helpers.evictChunk1(of: container, box)

        Helpers.failEveryRead(of: box, after: 0, faults)
        mine.courses = courses
        #expect(child.hasChanges)
        try child.save()
        #expect(faults.failedReadCount > 0)
        #expect(!child.hasChanges)
        #expect(mine.isFault)
        #expect(box.pinCount == 0)

        Helpers.stopFailingReads(faults)
        #expect(mine.year == 9)
        #expect(mine.name == name)
        #expect(mine.courses == courses)
        #expect(parent.hasChanges)
    }
}
