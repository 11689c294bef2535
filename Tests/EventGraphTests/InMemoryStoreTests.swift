import EventGraph
import Foundation
import LogFormat
import Testing

/// An in-memory store's log is a file in memory under the same writer and reader as a store on disk (issue 10):
/// the same scenario of saves, views as of a transaction and compactions gives the same answers, and the same
/// frames, in memory and on disk.
@Suite("An in-memory store behaves exactly like a file store")
struct InMemoryStoreTests {
    /// Saves, views and compactions, written down as they answer.
    static func transcript(of container: ModelContainer) throws -> [String] {
        var lines: [String] = []
        func view(_ transaction: UInt64) -> String {
            do {
                let context = try container.view(asOfTransaction: transaction).newBackgroundContext()
                let codes = try context.fetch(FetchDescriptor<Course>()).map(\.code).sorted()
                return "as of \(transaction): \(codes), \(try context.fetchCount(FetchDescriptor<Lesson>())) lessons"
            } catch {
                return "as of \(transaction): refused"
            }
        }
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "V1"
        try context.save()
        course.code = "V2"
        let lesson = Lesson()
        context.insert(lesson)
        lesson.course = course
        try context.save()
        let other = Course()
        context.insert(other)
        other.code = "W1"
        context.delete(lesson)
        try context.save()
        lines += (1...3).map(view)
        let early = try container.view(asOfTransaction: 2)
        let digest = try container.stateDigest()

        let report = try container.compact()
        lines.append("compacted \(report.objectCount) objects at \(report.lastTransactionID)")
        let digestAfter = try container.stateDigest()
        lines.append("digest kept: \(report.stateDigest == digest && digestAfter == digest)")
        lines += (1...3).map(view)
        let earlyCodes = try early.newBackgroundContext().fetch(FetchDescriptor<Course>()).map(\.code)
        lines.append("a view opened before the compaction: \(earlyCodes)")

        other.code = "W2"
        try context.save()
        lines.append(view(4))
        try container.compact()
        lines.append("after a second compaction: \(view(4)), last transaction \(container.lastTransactionID)")
        return lines
    }

    /// The kinds of the records a read of the log delivers, in order.
    static func recordKinds(_ path: String) throws -> [String] {
        var kinds: [String] = []
        try LogReader(path: path).scan { record in
            switch record {
            case .schema: kinds.append("schema")
            case .transaction(let transaction): kinds.append("transaction \(transaction.transactionID)")
            case .checkpointBegin(let begin, _): kinds.append("checkpoint at \(begin.lastTransactionID)")
            case .checkpointChunk(let chunk, _): kinds.append("chunk of \(chunk.records.count)")
            case .checkpointBlob: kinds.append("blob")
            case .checkpointEnd: kinds.append("checkpoint end")
            case .seal: kinds.append("seal")
            case .checkpointDirectory: kinds.append("directory")
            case .dictionary, .extensionFrame: kinds.append("other")
            }
        }
        return kinds
    }

    @Test func compactionAndViewsAnswerAlikeInMemoryAndOnDisk() throws {
        let directory = TemporaryDirectory()
        let onDisk = try ModelContainer(path: directory.file(), model: TestModels.school)
        let expected = try Self.transcript(of: onDisk)
        try onDisk.close()
        #expect(expected.contains("as of 1: refused"), "history before a compaction is gone: \(expected)")

        let inMemory = try ModelContainer(inMemoryWith: TestModels.school)
        #expect(try Self.transcript(of: inMemory) == expected)
        try inMemory.close()

        // The memory file holds the frames the file on disk holds.
        let probe = MemoryStoreProbe()
        let memoryFile = try probe.container(model: TestModels.school)
        #expect(try Self.transcript(of: memoryFile) == expected)
        try memoryFile.close()
        #expect(try Self.recordKinds(probe.path) == Self.recordKinds(directory.file()))
        let (memoryView, diskView) = (
            try ModelContainer.view(path: probe.path), try ModelContainer.view(path: directory.file())
        )
        #expect(try memoryView.stateDigest() == diskView.stateDigest())
    }

    @Test func anInMemoryStoreRefusesASecondWriterLikeAFile() throws {
        let probe = MemoryStoreProbe()
        let first = try probe.container(model: TestModels.school)
        #expect(throws: EventGraphError.self) { try probe.container(model: TestModels.school) }
        try first.close()
        try probe.container(model: TestModels.school).close()
    }
}
