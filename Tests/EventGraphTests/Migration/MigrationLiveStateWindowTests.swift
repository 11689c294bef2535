import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

@Suite("A live-state migration builds its state in windows and equals one built whole")
struct MigrationLiveStateWindowTests {
    /// Seeded random saves of the library model: books inserted on random shelves, retitled, moved, deleted;
    /// shelves inserted and deleted (their books lose their shelf). Returns the last transaction.
    @discardableResult
    private static func writeRandom(
        _ context: ObjectContext, saves: Int, generator: inout SeededGenerator, books: inout [LibraryV1.Book],
        shelves: inout [LibraryV1.Shelf]
    ) throws -> Int {
        for _ in 0..<saves {
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0 where shelves.count < 6, 1 where shelves.isEmpty:
                    let shelf = LibraryV1.Shelf()
                    context.insert(shelf)
                    shelf.label = "shelf \(Int.random(in: 0..<1000, using: &generator))"
                    shelves.append(shelf)
                case 1:
                    let shelf = shelves.remove(at: Int.random(in: 0..<shelves.count, using: &generator))
                    context.delete(shelf)
                case 2 where !books.isEmpty:
                    books[Int.random(in: 0..<books.count, using: &generator)].title =
                        "retitled \(Int.random(in: 0..<1000, using: &generator))"
                case 3 where !books.isEmpty:
                    books[Int.random(in: 0..<books.count, using: &generator)].shelf = shelves.randomElement(
                        using: &generator)
                case 4 where !books.isEmpty:
                    context.delete(books.remove(at: Int.random(in: 0..<books.count, using: &generator)))
                default:
                    let book = LibraryV1.Book()
                    context.insert(book)
                    book.title = "book \(Int.random(in: 0..<1000, using: &generator))"
                    book.pages = Int16.random(in: 0...900, using: &generator)
                    book.weight = Float(Int.random(in: 0..<100, using: &generator)) / 4
                    book.isbn = Bool.random(using: &generator) ? nil : "isbn-\(books.count)"
                    book.shelf = shelves.randomElement(using: &generator)
                    books.append(book)
                }
            }
            try context.save()
        }
        return books.count
    }

    /// A library store of seeded random saves whose log has a checkpoint in the middle: the transactions up to
    /// `middle`, then a checkpoint of the state after them (as a compaction writes it), then the later
    /// transactions. Returns the store's state digest under version 1.
    @discardableResult
    private static func writeStoreWithMiddleCheckpoint(at path: String, seed: UInt64) throws -> StateDigest {
        var generator = SeededGenerator(seed: seed)
        let compacted = path + ".compacted"
        let container = try ModelContainer(path: path, model: LibraryV1.model)
        let context = container.newBackgroundContext(name: "writer")
        var books: [LibraryV1.Book] = []
        var shelves: [LibraryV1.Shelf] = []
        try writeRandom(context, saves: 25, generator: &generator, books: &books, shelves: &shelves)
        let middle = container.lastTransactionID
        try FileManager.default.copyItem(atPath: path, toPath: compacted)
        try writeRandom(context, saves: 25, generator: &generator, books: &books, shelves: &shelves)
        let digest = try container.stateDigest()
        try container.close()
        do {
            let early = try ModelContainer(path: compacted, model: LibraryV1.model)
            try early.compact()
            try early.close()
        }
        // The new log: the old one's schema and transactions up to `middle`, the compacted copy's checkpoint, the
        // old one's later transactions.
        let writer = try LogWriter(path: path, options: LogWriter.Options(durability: .full, createIfMissing: false))
        var log = try writer.beginReplacement()
        let reader = try LogReader(path: path)
        var checkpointRecords: [LogRecord] = []
        try LogReader(path: compacted).scan { record in
            switch record {
            case .checkpointBegin, .checkpointChunk, .checkpointBlob, .checkpointEnd: checkpointRecords.append(record)
            default: break
            }
        }
        var wroteCheckpoint = false
        try reader.scan { record in
            switch record {
            case .schema(let schema, _):
                _ = try log.append(schema: schema)
            case .transaction(let transaction):
                if transaction.transactionID > middle, !wroteCheckpoint {
                    wroteCheckpoint = true
                    for checkpoint in checkpointRecords {
                        switch checkpoint {
                        case .checkpointBegin(let begin, _): _ = try log.beginCheckpoint(begin)
                        case .checkpointChunk(let chunk, _): _ = try log.appendCheckpointChunk(chunk)
                        case .checkpointEnd(let end, _): _ = try log.endCheckpoint(end, lastTransactionID: middle)
                        default: Issue.record("the library store has no external values")
                        }
                    }
                }
                try log.appendTransaction(id: transaction.transactionID, payload: try transaction.payload, blobs: [])
            default:
                break
            }
        }
        #expect(wroteCheckpoint)
        try log.finish()
        try writer.replace(with: log.path, keepingPreviousAt: nil)
        try writer.close()
        try? FileManager.default.removeItem(atPath: compacted)
        return digest
    }

    private static func options(_ mode: StoreMigration.HistoryMode, window: Int? = nil) -> StoreMigration.Options {
        var options = StoreMigration.Options(historyMode: mode)
        options.computesStateDigest = true
        options.windowObjectCount = window
        return options
    }

    @Test(arguments: [1, 5, 64])
    func seededRandomStoresMigrateInWindowsToTheWholeState(window: Int) throws {
        let seed = TestSeed.make() &+ UInt64(window)
        let directory = TemporaryDirectory()
        let path = directory.file()
        let digest = try Self.writeStoreWithMiddleCheckpoint(at: path, seed: seed)
        // The store with its checkpoint in the middle opens with the state it was written with.
        do {
            let container = try ModelContainer(path: path, model: LibraryV1.model)
            #expect(try container.stateDigest() == digest, "seed \(seed)")
            try container.close()
        }
        let reference = directory.file("reference.eglog")
        try FileManager.default.copyItem(atPath: path, toPath: reference)
        // The reference: history kept, the state built whole from the checkpoint on.
        let whole = try StoreMigration.migrate(path: reference, to: LibraryV2.model, options: Self.options(.full))
        let windowed = try StoreMigration.migrate(
            path: path, to: LibraryV2.model, options: Self.options(.liveState, window: window))
        #expect(windowed.stateDigest != nil)
        #expect(windowed.stateDigest == whole.stateDigest, "seed \(seed)")
        #expect(windowed.objectCounts == whole.objectCounts, "seed \(seed)")

        let container = try ModelContainer(
            path: path, model: LibraryV2.model, configuration: .init(recoveryHandler: nil))
        let full = try ModelContainer(
            path: reference, model: LibraryV2.model, configuration: .init(recoveryHandler: nil))
        #expect(try container.stateDigest() == windowed.stateDigest, "seed \(seed)")
        #expect(container.lastTransactionID == full.lastTransactionID)
        #expect(try GraphIntegrity.issues(container) == [])
        let reading = container.newBackgroundContext()
        let fullReading = full.newBackgroundContext()
        let books = try reading.fetch(FetchDescriptor<LibraryV2.Book>())
        let fullBooks = try fullReading.fetch(FetchDescriptor<LibraryV2.Book>())
        #expect(
            Set(books.map { "\($0.name) \($0.pages) \($0.shelf?.tag ?? "-")" })
                == Set(fullBooks.map { "\($0.name) \($0.pages) \($0.shelf?.tag ?? "-")" }))
        // New keys go on from where the old store left them.
        let context = container.newBackgroundContext()
        let book = LibraryV2.Book()
        context.insert(book)
        try context.save()
        #expect(!fullBooks.contains { $0.objectID.key == book.objectID.key })
        try full.close()
        try container.close()
    }

    @Test func aDryRunMeasuresTheWindowedCheckpointAsTheMigrationWritesIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try Self.writeStoreWithMiddleCheckpoint(at: path, seed: 7)
        let dry = try StoreMigration.dryRun(
            path: path, to: LibraryV2.model, options: Self.options(.liveState, window: 3))
        let whole = try StoreMigration.dryRun(path: path, to: LibraryV2.model, options: Self.options(.liveState))
        #expect(dry.stateDigest == whole.stateDigest)
        #expect(dry.objectCounts == whole.objectCounts)
        let report = try StoreMigration.migrate(
            path: path, to: LibraryV2.model, options: Self.options(.liveState, window: 3))
        #expect(report.stateDigest == dry.stateDigest)
    }

    @Test(arguments: [nil, 2] as [Int?])
    func customStagesThatReadRelationshipsMigrateInWindows(compactingAfter: Int?) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let reference = directory.file("reference.eglog")
        try WritingStore.write(at: path, compactingAfter: compactingAfter)
        try FileManager.default.copyItem(atPath: path, toPath: reference)
        let whole = try StoreMigration.migrate(path: reference, plan: WritingV2.plan, options: Self.options(.full))
        let windowed = try StoreMigration.migrate(
            path: path, plan: WritingV2.plan, options: Self.options(.liveState, window: 1))
        #expect(windowed.stateDigest == whole.stateDigest)
        #expect(windowed.objectCounts == whole.objectCounts)
        let container = try ModelContainer(
            path: path, model: WritingV2.model, configuration: .init(recoveryHandler: nil))
        #expect(try container.stateDigest() == windowed.stateDigest)
        #expect(try GraphIntegrity.issues(container) == [])
        try container.close()
    }

    /// A live-state migration in windows of 4 objects of the library store (10 books, one deleted, 3 shelves).
    private static var windowedLiveState: StoreMigration.Options { options(.liveState, window: 4) }

    /// How many times a fault-free windowed live-state migration calls each file operation.
    static let liveStateFaultPoints: [(FaultInjector.Operation, Int)] = {
        let directory = TemporaryDirectory()
        _ = try! writeLibraryV1(at: directory.file())
        let faults = FaultInjector()
        var options = windowedLiveState
        options.faultInjector = faults
        _ = try! StoreMigration.migrate(path: directory.file(), to: LibraryV2.model, options: options)
        return FaultInjector.Operation.allCases.flatMap { operation in
            (1...max(1, faults.callCount(operation))).map { (operation, $0) }
        }
    }()

    @Test(arguments: liveStateFaultPoints)
    func aFaultAtAnyStepOfAWindowedMigrationLeavesTheOldStoreOrTheNewOne(
        operation: FaultInjector.Operation, call: Int
    ) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        var never = ModelContainer.Configuration(recoveryHandler: nil)
        never.migration = .never
        let original = try ModelContainer(path: path, model: LibraryV1.model, configuration: never)
        let oldDigest = try original.stateDigest()
        try original.close()
        let reference = directory.file("reference.eglog")
        try FileManager.default.copyItem(atPath: path, toPath: reference)
        let expected = try StoreMigration.migrate(path: reference, to: LibraryV2.model, options: Self.windowedLiveState)
        let faults = FaultInjector()
        faults.arm(operation, onCall: call, fault: .fail(errno: EIO))
        var options = Self.windowedLiveState
        options.faultInjector = faults
        let succeeded = (try? StoreMigration.migrate(path: path, to: LibraryV2.model, options: options)) != nil
        try expectOldOrNewLibrary(at: path, succeeded: succeeded, oldDigest: oldDigest, newDigest: expected.stateDigest)
    }

    @Test func windowsFollowTheEntityNameOrderAndHoldAtMostTheirCount() {
        // Entities 0 ("Book"), 1 ("Bookcase"), 2 ("Reader") in name order; 5 books, 2 bookcases, no readers.
        let windows = MigrationWindow.windows(
            sortedKeys: [[3, 4, 9, 10, 12], [1, 2], []], order: [0, 1, 2], maxObjectCount: 2)
        #expect(windows.map(\.objectCount) == [2, 2, 2, 1])
        #expect(
            windows.map(\.ranges) == [
                [3...4, nil, nil], [9...10, nil, nil], [12...12, 1...1, nil], [nil, 2...2, nil],
            ])
        #expect(windows.map(\.isFirst) == [true, false, false, false])
        // A key between two windows' ranges belongs to neither: no live object has it.
        #expect(!windows.contains { $0.contains(ObjectReference(entityIndex: 0, key: 6)) })
        #expect(windows.filter { $0.contains(ObjectReference(entityIndex: 0, key: 10)) }.count == 1)
        // Another store's object goes to the first window only.
        #expect(
            windows.map { $0.contains(ObjectReference(storeIndex: 1, entityIndex: 0, key: 3)) } == [
                true, false, false, false,
            ])
        #expect(
            MigrationWindow.windows(sortedKeys: [[], []], order: [0, 1], maxObjectCount: 3).map(\.objectCount) == [0])
    }

    @Test func aWindowsPassDecodesOnlyTheTransactionsThatTouchIt() {
        #expect(MigrationTransactionSpans.ranges(of: [1, 2, 3, 7, 100, 101], atMost: 32) == [1...3, 7...7, 100...101])
        #expect(MigrationTransactionSpans.ranges(of: [1, 2, 3, 7, 100, 101], atMost: 2) == [1...7, 100...101])
        var spans = MigrationTransactionSpans()
        let touch = { (key: UInt64) in ChangeOperation.update(ObjectReference(entityIndex: 0, key: key), []) }
        for (id, keys) in [(5, [3, 900]), (6, [260]), (7, [])] as [(UInt64, [UInt64])] {
            spans.note(
                Changeset(
                    transactionID: id, commitTimeMicroseconds: 0, author: "", nextKey: 1001,
                    operations: keys.map(touch)),
                entityCount: 2)
        }
        spans.note(
            Changeset(
                transactionID: 8, commitTimeMicroseconds: 0, author: "", nextKey: 1001,
                operations: [touch(2), .delete(ObjectReference(storeIndex: 1, entityIndex: 0, key: 2))]),
            entityCount: 2)
        let windows = MigrationWindow.windows(sortedKeys: [Array(1...1000), []], order: [0, 1], maxObjectCount: 250)
        #expect(windows.map { spans.mayTouch(5, $0) } == [true, false, false, true])
        #expect(windows.map { spans.mayTouch(6, $0) } == [false, true, false, false])
        #expect(windows.map { spans.mayTouch(7, $0) } == [false, false, false, false])
        #expect(windows.map { spans.mayTouch(8, $0) } == [true, false, false, false])
        // Transactions a checkpoint of the old log replaces are read by none.
        spans.checkpointTransactionID = 6
        #expect(windows.map { spans.mayTouch(5, $0) } == [false, false, false, false])
    }
}
