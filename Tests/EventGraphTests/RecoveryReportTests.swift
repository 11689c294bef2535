import EventGraph
import Foundation
import LogFormat
import Testing

/// Collects what a container's recovery handler is given.
final class ReportLog: Sendable {
    let reports = LockedValue<[StoreRecoveryReport]>([])
    var handler: @Sendable (StoreRecoveryReport) -> Void { { report in self.reports.withLock { $0.append(report) } } }
}

/// Stores with one course per transaction, and surgery on their files.
enum RecoveryFixture {
    /// Saves courses C1…C`count`, one transaction each, and copies the file before the store is closed (what a
    /// crash leaves: no seal). Returns the copy and the byte offset of each transaction's frame in it.
    static func unsealedCopy(in directory: TemporaryDirectory, transactions count: Int) throws -> (
        path: String, frameOffsets: [UInt64]
    ) {
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        for number in 1...count {
            let course = Course()
            context.insert(course)
            course.code = "C\(number)"
            try context.save()
        }
        let copy = directory.file("crashed.eglog")
        try FileManager.default.copyItem(atPath: directory.file(), toPath: copy)
        try container.close()
        return (copy, try frameOffsets(of: copy))
    }

    /// A closed (sealed) store with courses C1…C`count`, and the byte offset of each transaction's frame.
    static func sealedStore(in directory: TemporaryDirectory, transactions count: Int) throws -> [UInt64] {
        let (_, _) = try unsealedCopy(in: directory, transactions: count)
        return try frameOffsets(of: directory.file())
    }

    static func frameOffsets(of path: String) throws -> [UInt64] {
        var offsets: [UInt64] = []
        try LogReader(path: path).scan { if case .transaction(let t) = $0 { offsets.append(t.byteOffset) } }
        return offsets
    }

    /// Flips one bit inside the body of the frame at `frameOffset`.
    static func flipBodyBit(of path: String, frameOffset: UInt64) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        let position = frameOffset + 48 + 3
        try handle.seek(toOffset: position)
        let byte = try #require(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: position)
        try handle.write(contentsOf: [byte ^ 0x10])
    }

    static func truncate(_ path: String, to byteCount: UInt64) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.truncate(atOffset: byteCount)
        try handle.close()
    }

    static func codes(in container: ModelContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.fetch(FetchDescriptor<Course>()).map(\.code).sorted()
    }
}

@Suite("A container reports what recovery dropped")
struct RecoveryReportTests {
    enum Crash: String, CaseIterable {
        /// The last transaction's frame is cut off in the middle of its body.
        case cutInTheLastFrame
        /// A bit of the last transaction's body flipped; it is unsealed, so this is a torn write, not damage.
        case bitFlipInTheLastFrame
    }

    static func crash(_ crash: Crash, in directory: TemporaryDirectory) throws -> (path: String, lastFrame: UInt64) {
        let (path, offsets) = try RecoveryFixture.unsealedCopy(in: directory, transactions: 3)
        switch crash {
        case .cutInTheLastFrame: try RecoveryFixture.truncate(path, to: offsets[2] + 60)
        case .bitFlipInTheLastFrame: try RecoveryFixture.flipBodyBit(of: path, frameOffset: offsets[2])
        }
        return (path, offsets[2])
    }

    @Test func aViewsTornTailIsNotWordedAsACrashOnly() {
        // A read-only view may be opened beside a live writer: the unsynced bytes it ignores can be a save still being
        // written, not the leftovers of a crash (KillNine's views beside running savers printed "from a crash").
        let report = StoreRecoveryReport(
            kind: .ignoredTornTail, path: "/tmp/x.eglog", byteOffset: 4096, byteCount: 512,
            reason: "frame header checksum mismatch", transactionIDs: nil, lastTransactionID: 7)
        #expect(report.description.contains("a save still being written"))
        #expect(report.description.contains("byte offset 4096") && report.description.contains("/tmp/x.eglog"))
    }

    @Test(arguments: Crash.allCases)
    func aWriterReportsTheTornTailItTruncated(_ crash: Crash) throws {
        let directory = TemporaryDirectory()
        let (path, lastFrame) = try Self.crash(crash, in: directory)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).uint64Value
        let log = ReportLog()
        let container = try ModelContainer(
            path: path, model: TestModels.school, configuration: .init(recoveryHandler: log.handler))
        let report = try #require(container.recoveryReport)
        #expect(report.kind == .truncatedTornTail)
        #expect(report.byteOffset == lastFrame)
        #expect(report.byteCount == size - lastFrame)
        #expect(report.transactionIDs == 3...3, "the frame header still names the dropped transaction")
        #expect(report.lastTransactionID == 2)
        #expect(report.description.contains("byte offset \(lastFrame)") && report.description.contains(path))
        #expect(log.reports.withLock { $0 } == [report], "the handler is told once")
        #expect(try RecoveryFixture.codes(in: container) == ["C1", "C2"])
        try container.close()

        let reopened = try ModelContainer(
            path: path, model: TestModels.school, configuration: .init(recoveryHandler: log.handler))
        #expect(reopened.recoveryReport == nil, "nothing is left to drop")
        #expect(log.reports.withLock { $0.count } == 1)
        try reopened.close()
    }

    @Test(arguments: Crash.allCases)
    func aReadOnlyViewReportsTheTornTailItIgnored(_ crash: Crash) throws {
        let directory = TemporaryDirectory()
        let (path, lastFrame) = try Self.crash(crash, in: directory)
        let log = ReportLog()
        let view = try ModelContainer.view(path: path, model: TestModels.school, recoveryHandler: log.handler)
        let report = try #require(view.recoveryReport)
        #expect(report.kind == .ignoredTornTail)
        #expect(report.byteOffset == lastFrame)
        #expect(report.transactionIDs == 3...3)
        #expect(log.reports.withLock { $0 } == [report])
        #expect(try RecoveryFixture.codes(in: view) == ["C1", "C2"])
    }

    @Test("a crash leaves preallocated zeros after the last save: no torn tail, neither read-only nor to a writer")
    func preallocatedZerosAreNoTornTail() throws {
        let directory = TemporaryDirectory()
        let (path, offsets) = try RecoveryFixture.unsealedCopy(in: directory, transactions: 3)
        let scan = try LogReader(path: path).scan { _ in }
        guard case .torn(let tail) = scan.tail else {
            Issue.record("preallocation is on by default (h58): zeros follow the last frame, \(scan.tail)")
            return
        }
        #expect(tail.isPreallocatedSpace && tail.byteOffset > offsets[2] && tail.transactionIDs.isEmpty)
        let log = ReportLog()
        let view = try ModelContainer.view(path: path, model: TestModels.school, recoveryHandler: log.handler)
        #expect(view.recoveryReport == nil, "zeros are not data: nothing was left out")
        #expect(try RecoveryFixture.codes(in: view) == ["C1", "C2", "C3"])
        let container = try ModelContainer(
            path: path, model: TestModels.school, configuration: .init(recoveryHandler: log.handler))
        #expect(container.recoveryReport == nil)
        #expect(log.reports.withLock { $0.isEmpty })
        try container.close()
    }

    @Test("read-only views opened beside a saving container (preallocated space on) never stop at damage")
    func viewsBesideASavingContainer() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        let first = Course()
        context.insert(first)
        first.code = "C0"
        try context.save()
        let saving = DispatchGroup()
        let failure = LockedValue<String?>(nil)
        DispatchQueue.global().async(group: saving) {
            let context = container.newBackgroundContext()
            for number in 1...300 {
                let course = Course()
                context.insert(course)
                course.code = "C\(number)"
                do { try context.save() } catch {
                    failure.withLock { $0 = "save \(number): \(error)" }
                    return
                }
            }
        }
        var views = 0
        while saving.wait(timeout: .now()) == .timedOut || views == 0 {
            let log = ReportLog()
            let view = try ModelContainer.view(
                path: directory.file(), model: TestModels.school, recoveryHandler: log.handler)
            if let report = view.recoveryReport, report.kind == .stoppedAtDamage {
                Issue.record("view \(views) beside the saves stopped at damage: \(report)")
                break
            }
            views += 1
        }
        saving.wait()
        #expect(failure.withLock { $0 } == nil)
        try container.close()
        #expect(
            try RecoveryFixture.codes(
                in: ModelContainer.view(path: directory.file(), model: TestModels.school, recoveryHandler: nil)
            ).count
                == 301)
    }

    @Test func aCleanStoreHasNoReport() throws {
        let directory = TemporaryDirectory()
        _ = try RecoveryFixture.sealedStore(in: directory, transactions: 2)
        let log = ReportLog()
        let container = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: .init(recoveryHandler: log.handler))
        #expect(container.recoveryReport == nil)
        #expect(try ModelContainer.view(path: directory.file(), recoveryHandler: log.handler).recoveryReport == nil)
        #expect(log.reports.withLock { $0.isEmpty })
        try container.close()
    }
}

@Suite("A damaged store opens read-only up to the damage")
struct DamagedViewTests {
    /// Courses C1…C5 in transactions 1…5, sealed, with a bit flipped in transaction 3's frame.
    static func damagedStore(in directory: TemporaryDirectory) throws -> UInt64 {
        let offsets = try RecoveryFixture.sealedStore(in: directory, transactions: 5)
        try RecoveryFixture.flipBodyBit(of: directory.file(), frameOffset: offsets[2])
        return offsets[2]
    }

    @Test func theAdviceOfTheDamageErrorWorks() throws {
        let directory = TemporaryDirectory()
        let damageOffset = try Self.damagedStore(in: directory)
        var message = ""
        #expect {
            try ModelContainer(path: directory.file(), model: TestModels.school)
        } throws: { error in
            message = "\(error)"
            return (error as? EventGraphError)?.underlying?.code == .damaged
        }
        #expect(message.contains("read-only"), "\(message)")

        for transaction: UInt64 in [1, 2] {
            let view = try ModelContainer.view(
                path: directory.file(), asOfTransaction: transaction, model: TestModels.school, recoveryHandler: nil)
            #expect(try RecoveryFixture.codes(in: view) == (1...transaction).map { "C\($0)" })
            #expect(view.recoveryReport?.kind == .stoppedAtDamage)
            #expect(view.recoveryReport?.byteOffset == damageOffset)
        }
        #expect {
            try ModelContainer.view(path: directory.file(), asOfTransaction: 4, recoveryHandler: nil)
        } throws: { error in
            "\(error)".contains("damage") && (error as? EventGraphError)?.code == .invalidArgument
        }
    }

    @Test func theLatestStateNeedsNoTransactionID() throws {
        let directory = TemporaryDirectory()
        let damageOffset = try Self.damagedStore(in: directory)
        let log = ReportLog()
        let view = try ModelContainer.view(
            path: directory.file(), model: TestModels.school, recoveryHandler: log.handler)
        #expect(view.isReadOnly)
        #expect(view.lastTransactionID == 2)
        #expect(try RecoveryFixture.codes(in: view) == ["C1", "C2"])
        let report = try #require(view.recoveryReport)
        #expect(report.kind == .stoppedAtDamage)
        #expect(report.byteOffset == damageOffset)
        #expect(report.transactionIDs == 3...3, "transaction 4 verifies after the damage")
        #expect(report.lastTransactionID == 2)
        #expect(log.reports.withLock { $0 } == [report])

        let intact = TemporaryDirectory()
        _ = try RecoveryFixture.sealedStore(in: intact, transactions: 3)
        let latest = try ModelContainer.view(path: intact.file(), model: TestModels.school)
        #expect(try RecoveryFixture.codes(in: latest) == ["C1", "C2", "C3"])
        #expect(latest.recoveryReport == nil)
    }
}
