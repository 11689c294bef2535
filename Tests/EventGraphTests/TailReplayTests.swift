import LogFormat
import Testing

@testable import EventGraph

/// Opening a store replays the log's tail after its checkpoint on top of the checkpoint's chunks, which stay on disk
/// until something touches them.
@Suite("Replaying the tail after a checkpoint")
struct TailReplayTests {
    static let studentEntity = TestModels.school.entities.firstIndex { $0.name == "Student" }!
    static let courseEntity = TestModels.school.entities.firstIndex { $0.name == "Course" }!

    @Test func aTailOfUpdatesLoadsOnlyTheChunksOfTheObjectsItChanges() throws {
        let directory = TemporaryDirectory()
        let expected: StateDigest
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            let course = Course()
            context.insert(course)
            course.code = "A"
            var students: [Student] = []
            for index in 0..<(ColumnChunk.slotCapacity + 10) {
                let student = Student()
                context.insert(student)
                student.name = "student \(index)"
                student.courses = [course]
                students.append(student)
            }
            try context.save()
            _ = try container.compact()
            // The tail: students of the first chunk renamed, one save each; each student points to the course.
            for student in students.prefix(20) {
                student.name += " renamed"
                try context.save()
            }
            expected = try container.stateDigest()
            try container.close()
        }

        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let state = container.store.state.withLock { $0 }
        #expect(state.version(ofEntity: Self.studentEntity).unreadChunkCount == 1)
        // The replay changes no course: the chunk of the course the students point to stays on disk (it was read
        // to find the targets of each changed student's relationships before).
        #expect(state.version(ofEntity: Self.courseEntity).unreadChunkCount == 1)
        #expect(try container.stateDigest() == expected)
        #expect(try LazyCheckpointLoadingTests.fullReplayDigest(of: directory.file()) == expected)
    }
}
