import EventGraph
import Foundation
import LogFormat
import Testing

/// Compaction writes the checkpoint in the chunk layout (format 1.3): one entity chunk per column chunk of live
/// objects and a directory; a store opened from it has the same state, and damage inside a chunk is reported with
/// the chunk and the entity it belongs to.
@Suite("Checkpoints in the chunk layout")
struct CheckpointChunkLayoutTests {
    /// A store with `studentCount` students (every seventh deleted again) and two courses, compacted and closed.
    /// Returns the state digest and the number of live students.
    @discardableResult
    static func compactedStore(at path: String, studentCount: Int) throws -> (StateDigest, Int) {
        let container = try ModelContainer(path: path, model: TestModels.school)
        let context = container.newBackgroundContext()
        for code in ["A", "B"] {
            let course = Course()
            context.insert(course)
            course.code = code
        }
        var students: [Student] = []
        for index in 0..<studentCount {
            let student = Student()
            context.insert(student)
            student.name = "student \(index)"
            student.year = Int16(index % 5)
            students.append(student)
        }
        try context.save()
        for (index, student) in students.enumerated() where index % 7 == 3 { context.delete(student) }
        try context.save()
        let digest = try container.stateDigest()
        #expect(try container.compact().stateDigest == digest)
        try container.close()
        return (digest, studentCount - students.indices.count { $0 % 7 == 3 })
    }

    /// The directory of the file's checkpoint, read as a tool reads it.
    static func directory(of path: String) throws -> CheckpointDirectory? {
        var found: CheckpointDirectory?
        try LogReader(path: path).scan { record in
            if case .checkpointDirectory(let directory, _) = record { found = directory }
        }
        return found
    }

    /// The checkpoint-end frame records the digest with its definition's number first (2), so that a reader can tell
    /// it from the 16 bytes of the first definition that older files hold (`Docs/FileFormat-Payloads.md` §5.7.3).
    @Test func theCheckpointEndRecordsTheDigestAfterItsDefinition() throws {
        let directory = TemporaryDirectory()
        let (digest, _) = try Self.compactedStore(at: directory.file(), studentCount: 50)
        var recorded: [[UInt8]] = []
        try LogReader(path: directory.file()).scan { record in
            if case .checkpointEnd(let end, _) = record { recorded.append(end.stateDigest) }
        }
        #expect(recorded == [[2] + digest.bytes])
    }

    @Test(
        "a compacted store reopens from its entity chunks with the same state",
        arguments: [1, 4_096, 10_000])
    func compactedStoreReopens(studentCount: Int) throws {
        let directory = TemporaryDirectory()
        let (digest, liveCount) = try Self.compactedStore(at: directory.file(), studentCount: studentCount)
        let listed = try #require(try Self.directory(of: directory.file()))
        // Student and Course have objects; each of their column chunks is one entity chunk.
        #expect(listed.entities.count == 2)
        #expect(listed.allChunks.reduce(0) { $0 + Int($1.objectCount) } == liveCount + 2)
        #expect(listed.allChunks.allSatisfy { $0.objectCount <= 4_096 })

        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        #expect(try container.stateDigest() == digest)
        let context = container.newBackgroundContext()
        #expect(try context.fetchCount(FetchDescriptor<Student>()) == liveCount)
        let last = try context.fetch(FetchDescriptor<Student>(predicate: #Predicate { $0.name == "student 0" }))
        #expect(last.count == 1)
        // The store keeps working on top of the loaded checkpoint: change, delete, insert, reopen.
        last.first?.year = 42
        let newcomer = Student()
        context.insert(newcomer)
        newcomer.name = "newcomer"
        try context.save()
        let changed = try container.stateDigest()
        try container.close()
        let reopened = try ModelContainer(path: directory.file(), model: TestModels.school)
        #expect(try reopened.stateDigest() == changed)
        try reopened.close()
    }

    /// Flips a bit in the middle of the second student chunk's body (after its 48-byte frame header); returns the
    /// chunk's directory entry.
    @discardableResult
    static func damageSecondStudentChunk(at path: String) throws -> EntityChunkEntry {
        let listed = try #require(try Self.directory(of: path))
        let students = try #require(listed.entities.first { $0.chunks.count == 3 })
        let target = students.chunks[1]
        try flipBit(0x10, inBodyOf: target, at: 100, path: path)
        return target
    }

    /// Flips bits of one byte of a chunk's frame body, `offset` bytes after its 48-byte frame header.
    static func flipBit(_ mask: UInt8, inBodyOf chunk: EntityChunkEntry, at offset: UInt64, path: String) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: chunk.byteOffset + 48 + offset)
        let byte = try #require(try handle.read(upToCount: 1))
        try handle.seek(toOffset: chunk.byteOffset + 48 + offset)
        try handle.write(contentsOf: [byte[0] ^ mask])
        try handle.close()
    }

    @Test func damageInsideAChunkNamesTheChunkAndTheEntityAndAFullScanFindsIt() throws {
        let directory = TemporaryDirectory()
        try Self.compactedStore(at: directory.file(), studentCount: 10_000)
        let target = try Self.damageSecondStudentChunk(at: directory.file())

        // Open reads no chunk, so it succeeds; what reads the damaged chunk throws (more in
        // LazyCheckpointLoadingTests).
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let error = #expect(throws: EventGraphError.self) { try container.stateDigest() }
        let message = error?.message ?? ""
        #expect(message.contains("chunk 1 of entity Student"), "\(message)")
        #expect(message.contains("byte offset \(target.byteOffset)"), "\(message)")
        try container.close()

        // What `egctl verify` runs: a scan that reads every body.
        let report = try LogReader(path: directory.file()).scan()
        guard case .damaged(let damage) = report.tail else {
            Issue.record("a full scan did not find the damage: \(report.tail)")
            return
        }
        #expect(damage.byteOffset == target.byteOffset)
    }
}
