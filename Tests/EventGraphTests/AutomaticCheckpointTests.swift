import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// A store rewrites its log as a checkpoint after the save that makes the tail since the last checkpoint reach the
/// configured count; a failure at any step of that rewrite leaves a store that opens as before the checkpoint or
/// with it, never neither, and never loses the save that ran it.
@Suite("Automatic checkpoints")
struct AutomaticCheckpointTests {
    /// The checkpoint's last transaction and the transactions after it, as a tool reads the file.
    static func layout(of path: String) throws -> (checkpoint: UInt64?, tail: [UInt64]) {
        var checkpoint: UInt64?
        var tail: [UInt64] = []
        try LogReader(path: path).scan { record in
            if case .checkpointBegin(let begin, _) = record { checkpoint = begin.lastTransactionID }
            if case .transaction(let transaction) = record { tail.append(transaction.transactionID) }
        }
        return (checkpoint, tail)
    }

    /// Saves one course per transaction; with `container`, waits after each save for the automatic checkpoint it
    /// may have started (which runs on a thread of its own).
    static func saveCourses(
        _ codes: some Sequence<Int>, in context: ObjectContext, waitingFor container: ModelContainer? = nil
    ) throws {
        for code in codes {
            let course = Course()
            context.insert(course)
            course.code = "C\(code)"
            try context.save()
            container?.waitForAutomaticCheckpoints()
        }
    }

    /// A school store in `directory` under a default configuration that `configure` changes.
    static func container(
        in directory: TemporaryDirectory, _ configure: (inout ModelContainer.Configuration) -> Void
    ) throws -> (ModelContainer, ModelContainer.Configuration) {
        var configuration = ModelContainer.Configuration()
        configure(&configuration)
        let container = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: configuration)
        return (container, configuration)
    }

    @Test func theSaveThatReachesTheCountWritesACheckpoint() throws {
        let directory = TemporaryDirectory()
        let (container, configuration) = try Self.container(in: directory) {
            $0.automaticCheckpointTransactionCount = 10
        }
        let context = container.newBackgroundContext()
        try Self.saveCourses(1...9, in: context, waitingFor: container)
        #expect(try Self.layout(of: directory.file()).checkpoint == nil)
        try Self.saveCourses(10...25, in: context, waitingFor: container)
        let (checkpoint, tail) = try Self.layout(of: directory.file())
        #expect(checkpoint == 20)
        #expect(tail == Array(21...25))
        #expect(container.lastAutomaticCheckpointFailure == nil)
        let digest = try container.stateDigest()
        try container.close()

        // A reopened store counts from its checkpoint.
        let reopened = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: configuration)
        #expect(try reopened.stateDigest() == digest)
        try Self.saveCourses(26...30, in: reopened.newBackgroundContext(), waitingFor: reopened)
        #expect(try Self.layout(of: directory.file()).checkpoint == 30)
        try reopened.close()
    }

    /// Saves one course per transaction whose code is `byteCount` random letters (which LZ4 hardly compresses), so
    /// that each save adds about that many bytes to the log.
    static func saveLargeCourses(
        _ count: Int, of byteCount: Int, in context: ObjectContext, using random: inout SeededGenerator,
        waitingFor container: ModelContainer
    ) throws {
        for _ in 0..<count {
            let course = Course()
            context.insert(course)
            course.code = String(
                decoding: (0..<byteCount).map { _ in UInt8.random(in: 0x61...0x7A, using: &random) }, as: UTF8.self)
            try context.save()
            container.waitForAutomaticCheckpoints()
        }
    }

    /// The log's bytes after its checkpoint's end frame (the whole file without a checkpoint), as a tool reads it.
    static func tailByteCount(of path: String) throws -> UInt64 {
        var checkpointEnd: UInt64 = 0
        // The committed bytes, not the file's size (the writer allocates the file ahead of its appends).
        let report = try LogReader(path: path).scan { record in
            if case .checkpointEnd(_, let byteOffset) = record { checkpointEnd = byteOffset }
        }
        return report.committedByteCount - checkpointEnd
    }

    /// A few large saves, which a count of transactions does not see, start a checkpoint once the log's bytes after
    /// the last one reach the threshold; many small saves do not; a reopened store measures from its checkpoint.
    @Test func theSaveThatMakesTheTailReachTheByteCountWritesACheckpoint() throws {
        let directory = TemporaryDirectory()
        let (container, configuration) = try Self.container(in: directory) {
            $0.automaticCheckpointTailByteCount = 250_000
        }
        let context = container.newBackgroundContext()
        var random = SeededGenerator(seed: 14)
        // 200 small saves: a few kilobytes of log, far below the threshold (and far past any count).
        try Self.saveCourses(1...200, in: context, waitingFor: container)
        #expect(try Self.layout(of: directory.file()).checkpoint == nil)
        let small = try Self.tailByteCount(of: directory.file())
        #expect(small < 100_000)

        // Two saves of 100 kB each leave the tail below 250 kB; the third crosses it.
        try Self.saveLargeCourses(2, of: 100_000, in: context, using: &random, waitingFor: container)
        #expect(try Self.layout(of: directory.file()).checkpoint == nil)
        #expect(try Self.tailByteCount(of: directory.file()) < 250_000)
        try Self.saveLargeCourses(1, of: 100_000, in: context, using: &random, waitingFor: container)
        var (checkpoint, tail) = try Self.layout(of: directory.file())
        #expect(checkpoint == 203)
        #expect(tail.isEmpty)
        #expect(container.lastAutomaticCheckpointFailure == nil)

        // Counted from the checkpoint again: two more large saves, then the third starts the next one.
        try Self.saveLargeCourses(2, of: 100_000, in: context, using: &random, waitingFor: container)
        (checkpoint, tail) = try Self.layout(of: directory.file())
        #expect(checkpoint == 203)
        #expect(tail == [204, 205])
        let digest = try container.stateDigest()
        try container.close()

        // A reopened store measures its tail from the checkpoint it opened (not from the file's start, which would
        // start a checkpoint at its first save).
        let reopened = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: configuration)
        #expect(try reopened.stateDigest() == digest)
        let reopenedContext = reopened.newBackgroundContext()
        try Self.saveCourses([1000], in: reopenedContext, waitingFor: reopened)
        #expect(try Self.layout(of: directory.file()).checkpoint == 203)
        try Self.saveLargeCourses(1, of: 100_000, in: reopenedContext, using: &random, waitingFor: reopened)
        (checkpoint, tail) = try Self.layout(of: directory.file())
        #expect(checkpoint == 207)
        #expect(tail.isEmpty)
        try reopened.close()
    }

    /// Every file operation of the checkpoint's rewrite, failed in turn (the save's own write and sync come first).
    @Test(
        "a failure at any step of an automatic checkpoint keeps the store openable, with or without it",
        arguments: FaultInjector.Operation.allCases, 1...4)
    func failureAtAnyStep(operation: FaultInjector.Operation, call: Int) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration(durability: .full)
        configuration.automaticCheckpointTransactionCount = 5
        configuration.faultInjector = faults
        let container = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: configuration)
        let context = container.newBackgroundContext()
        try Self.saveCourses(1...4, in: context)
        let before = try container.stateDigest()

        faults.arm(operation, onCall: call, fault: .fail(errno: EIO))
        var saved = true
        do { try Self.saveCourses([5], in: context, waitingFor: container) } catch { saved = false }
        let after = try container.stateDigest()
        let checkpointFailure = container.lastAutomaticCheckpointFailure
        try? container.close()
        // No save renames a file: a failed rename is the checkpoint's, which fails alone.
        if operation == .rename && call == 1 {
            #expect(saved && checkpointFailure != nil && faults.firedFaults == [.rename])
        }

        let reopened = try ModelContainer(path: directory.file(), model: TestModels.school)
        let digest = try reopened.stateDigest()
        // The save either failed (nothing of it is there) or committed (it is there, checkpoint or not).
        #expect(digest == (saved ? after : before))
        #expect(saved || digest == before)
        let (checkpoint, _) = try Self.layout(of: directory.file())
        #expect(checkpoint == nil || checkpoint == 5)
        try reopened.close()
        withExtendedLifetime(context) {}
    }
}
