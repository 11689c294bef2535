import EventGraph
import Foundation
import LogFormat
import Testing

/// Named, persistent counters (seed 003's IDGenerator): each value is handed out once, ever — across reopening,
/// compaction, a crash that tears the log's tail, and contexts asking at once on several threads.
@Suite("Sequence generators")
struct SequenceGeneratorTests {
    private func open(
        _ directory: TemporaryDirectory, _ name: String = "store.eglog", durability: CommitDurability = .full
    ) throws -> ModelContainer {
        try ModelContainer(
            path: directory.file(name), model: TestModels.samples,
            configuration: ModelContainer.Configuration(durability: durability))
    }

    @Test(arguments: [CommitDurability.full, .none])
    func valuesCountFromOnePerNameAndContinueAfterReopening(durability: CommitDurability) throws {
        let directory = TemporaryDirectory()
        let container = try open(directory, durability: durability)
        #expect(try (0..<3).map { _ in try container.nextValue(of: "studentID") } == [1, 2, 3])
        #expect(try container.nextValue(of: "courseID") == 1, "each name counts on its own")
        try container.close()
        let reopened = try open(directory, durability: durability)
        defer { try? reopened.close() }
        #expect(try reopened.nextValue(of: "studentID") == 4)
        #expect(try reopened.nextValue(of: "courseID") == 2)
    }

    @Test func aCompactionKeepsTheCounters() throws {
        let directory = TemporaryDirectory()
        let container = try open(directory)
        for _ in 0..<5 { _ = try container.nextValue(of: "studentID") }
        let context = container.newBackgroundContext()
        context.insert(Sample())
        try context.save()
        _ = try container.compact()
        #expect(try container.nextValue(of: "studentID") == 6)
        try container.close()
        let reopened = try open(directory)
        defer { try? reopened.close() }
        #expect(try reopened.nextValue(of: "studentID") == 7, "the checkpoint carried the counter")
    }

    /// The checkpoint alone must carry the counters: no value is taken after the compaction, so no transaction
    /// after the checkpoint records them again.
    @Test func aCompactionThatIsTheLastWriteKeepsTheCounters() throws {
        let directory = TemporaryDirectory()
        let container = try open(directory)
        for _ in 0..<5 { _ = try container.nextValue(of: "studentID") }
        _ = try container.compact()
        try container.close()
        let reopened = try open(directory)
        defer { try? reopened.close() }
        #expect(try reopened.nextValue(of: "studentID") == 6, "the checkpoint carried the counter")
    }

    /// Values handed out, then a save whose frame a crash tears (durability `.none`: nothing of it was synced):
    /// the copy of the file taken before closing is what a crash leaves.
    @Test func aTornTailAfterTheValuesDoesNotHandThemOutAgain() throws {
        let directory = TemporaryDirectory()
        let container = try open(directory, durability: .none)
        let handedOut = try (0..<3).map { _ in try container.nextValue(of: "studentID") }
        let context = container.newBackgroundContext()
        let sample = Sample()
        context.insert(sample)
        sample.string = String(repeating: "x", count: 500)
        try context.save()
        try FileManager.default.copyItem(atPath: directory.file(), toPath: directory.file("crashed.eglog"))
        try container.close()
        let crashed = try FileHandle(forUpdating: URL(fileURLWithPath: directory.file("crashed.eglog")))
        try crashed.truncate(atOffset: directory.byteCount("crashed.eglog") - 7)
        try crashed.close()

        let recovered = try open(directory, "crashed.eglog")
        defer { try? recovered.close() }
        #expect(try recovered.newBackgroundContext().fetchCount(FetchDescriptor<Sample>()) == 0, "the save was torn")
        let next = try recovered.nextValue(of: "studentID")
        #expect(next > handedOut.max()!, "handed out \(handedOut), then \(next)")
    }

    @Test func contextsOnSeveralThreadsNeverGetTheSameValue() throws {
        let directory = TemporaryDirectory()
        let container = try open(directory, durability: .none)
        defer { try? container.close() }
        let threadCount = 8
        let perThread = 25
        let values = LockedValue<[Int64]>([])
        let barrier = ThreadBarrier(count: threadCount)
        onThreads(threadCount) { thread in
            let context = container.newBackgroundContext(name: "thread \(thread)")
            barrier.arriveAndWait()
            for _ in 0..<perThread {
                let value = try! container.nextValue(of: "studentID")
                let sample = Sample()
                context.insert(sample)
                sample.int64 = value
                try! context.save()
                values.withLock { $0.append(value) }
            }
        }
        let all = values.withLock { $0 }
        #expect(all.sorted() == Array(1...Int64(threadCount * perThread)), "every value once, none skipped")
        let saved = try container.newBackgroundContext().fetch(FetchDescriptor<Sample>()).map(\.int64)
        #expect(Set(saved).count == threadCount * perThread)
    }

    @Test func aCounterLivesInTheStoreOfItsConfiguration() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        #expect(try container.nextValue(of: "id") == 1)
        #expect(try container.nextValue(of: "id", inConfiguration: "Staff") == 1, "another store, another counter")
        #expect(try container.nextValue(of: "id", inConfiguration: "Staff") == 2)
        let unknown = try #require(throws: EventGraphError.self) {
            try container.nextValue(of: "id", inConfiguration: "Archive")
        }
        #expect(unknown.code == .invalidArgument)
        try container.close()

        var stores = SeveralStoresModels.stores(in: directory)
        stores[1].mounting = .never
        let partial = try ModelContainer(model: SeveralStoresModels.campus, stores: stores)
        defer { try? partial.close() }
        let error = try #require(throws: EventGraphError.self) {
            try partial.nextValue(of: "id", inConfiguration: "Staff")
        }
        #expect(error.code == .storeNotMounted, "\(error)")
        #expect(try partial.nextValue(of: "id") == 2)
    }

    @Test(arguments: ["", String(repeating: "n", count: 257)])
    func aBadNameIsRefused(name: String) throws {
        let directory = TemporaryDirectory()
        let container = try open(directory)
        defer { try? container.close() }
        let error = try #require(throws: EventGraphError.self) { try container.nextValue(of: name) }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("\(name.utf8.count)"), "\(error)")
    }

    /// A changeset without counters is written as payload version 1, as before: older readers still read it, and
    /// one with counters round-trips as version 3 (version 2 is a part of a save across stores; no changeset is both).
    @Test func onlyAChangesetWithCountersIsWrittenAsVersion3() throws {
        var changeset = Changeset(
            transactionID: 7, commitTimeMicroseconds: 1, author: "a", nextKey: 3, operations: [])
        let plain = try changeset.encoded()
        #expect(plain.first == 1)
        #expect(try Changeset(decoding: plain) == changeset)
        changeset.sequenceReservations = [SequenceReservation(name: "studentID", lastValue: 300)]
        let counted = try changeset.encoded()
        #expect(counted.first == 3)
        #expect(try Changeset(decoding: counted) == changeset)
        changeset.crossStore = CrossStoreTransaction(
            id: LogUUID(bytes: [UInt8](repeating: 1, count: 16)),
            participants: [
                .init(storeUUID: LogUUID(bytes: [UInt8](repeating: 2, count: 16)), transactionID: 7),
                .init(storeUUID: LogUUID(bytes: [UInt8](repeating: 3, count: 16)), transactionID: 1),
            ])
        let both = try #require(throws: LogFormatError.self) { try changeset.encoded() }
        #expect(both.code == .invalidArgument)
    }
}
