import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// An object with a unique identity and an indexed rank, for stored checkpoint indexes.
final class IndexedItem: ManagedObject {
    @Attribute(.unique) var handle: String = ""
    @Attribute(.indexed) var rank: Int64 = 0
    @Attribute var note: String = ""
}

/// A checkpoint of format 1.4 stores the uniqueness entries and the attribute indexes (`Docs/FileFormat-
/// Checkpoints.md` §7): a lookup after reopen reads one index chunk and the entity chunk of the object it finds, the
/// tail since the checkpoint is applied on top, and a damaged index chunk never gives a wrong answer.
@Suite("Indexes stored in the checkpoint")
struct StoredCheckpointIndexTests {
    static let model = try! ObjectModel(name: "Indexed", version: "1", types: [IndexedItem.self])
    static let itemEntity = 0

    static func state(of container: ModelContainer) -> StoreState { container.store.state.withLock { $0 } }

    /// A compacted store of `count` items: identity "item-NNNNN", rank = index / 100.
    @discardableResult
    static func compactedStore(at path: String, count: Int) throws -> StateDigest {
        let container = try ModelContainer(path: path, model: model)
        let context = container.newBackgroundContext()
        insertItems(count, into: context)
        try context.save()
        let digest = try container.stateDigest()
        #expect(try container.compact().stateDigest == digest)
        try container.close()
        return digest
    }

    /// Inserts `count` items: identity "item-NNNNN", rank = index / 100.
    static func insertItems(_ count: Int, into context: ObjectContext) {
        for index in 0..<count {
            let item = IndexedItem()
            context.insert(item)
            item.handle = identity(index)
            item.rank = Int64(index / 100)
        }
    }

    static func identity(_ index: Int) -> String { "item-" + String(100_000 + index).dropFirst() }

    static func fetch(identity: String, in context: ObjectContext) throws -> [IndexedItem] {
        try context.fetch(FetchDescriptor<IndexedItem>(filter: .equal("handle", .string(identity))))
    }

    static func fetch(rank: Int64, in context: ObjectContext) throws -> Set<String> {
        Set(try context.fetch(FetchDescriptor<IndexedItem>(filter: .equal("rank", .int64(rank)))).map(\.handle))
    }

    static func fullReplayDigest(of path: String) throws -> StateDigest {
        try LazyCheckpointLoadingTests.fullReplayDigest(of: path)
    }

    /// A compaction's input hands its built index chunks to the writer once (a second call gets none), so that the
    /// writer lets them go as soon as they are written instead of the input holding them to the compaction's end.
    @Test func theCompactionInputHandsItsIndexChunksOverOnce() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: Self.model)
        let context = container.newBackgroundContext()
        for index in 0..<300 {
            let item = IndexedItem()
            context.insert(item)
            item.handle = Self.identity(index)
            item.rank = Int64(index / 100)
        }
        try context.save()
        let input = try container.store.checkpointInput(of: Self.state(of: container))
        defer { input.digest.cancel() }
        let handedOver = input.indexChunks()
        // The uniqueness constraint and the attribute indexes (the unique handle is indexed too).
        #expect(handedOver.map(\.index.kind) == [.unique, .attribute, .attribute])
        #expect(handedOver.allSatisfy { $0.chunks.reduce(0) { $0 + $1.entries.count } == 300 })
        #expect(handedOver.allSatisfy { $0.keys.count == 300 })
        #expect(input.indexChunks().isEmpty)
        try container.close()
    }

    @Test func theDirectoryListsBothIndexesAndOpenReadsNone() throws {
        let directory = TemporaryDirectory()
        try Self.compactedStore(at: directory.file(), count: 20_000)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: directory.file()))
        // The unique attribute is indexed too.
        #expect(listed.indexes.map(\.kind) == [.unique, .attribute, .attribute])
        #expect(listed.indexes.allSatisfy { $0.chunks.reduce(0) { $0 + Int($1.entryCount) } == 20_000 })
        let container = try ModelContainer(path: directory.file(), model: Self.model)
        defer { try? container.close() }
        let state = Self.state(of: container)
        #expect(state.unreadStoredIndexChunkCount == listed.allIndexChunkOffsets.count)
        #expect(state.version(ofEntity: Self.itemEntity).unreadChunkCount == 5)
        #expect(state.pendingUniqueEntities.isEmpty)
    }

    @Test func aLookupByUniqueValueReadsOneIndexChunkAndOneEntityChunk() throws {
        let directory = TemporaryDirectory()
        try Self.compactedStore(at: directory.file(), count: 20_000)
        let container = try ModelContainer(path: directory.file(), model: Self.model)
        defer { try? container.close() }
        let unreadIndexChunks = Self.state(of: container).unreadStoredIndexChunkCount
        let items = Self.state(of: container).version(ofEntity: Self.itemEntity)
        let context = container.newBackgroundContext()
        let found = try Self.fetch(identity: Self.identity(12_345), in: context)
        #expect(found.map(\.rank) == [123])
        #expect(items.unreadChunkCount == 4)
        #expect(Self.state(of: container).unreadStoredIndexChunkCount == unreadIndexChunks - 1)
        #expect(try Self.fetch(identity: "absent", in: context).isEmpty)
        // A new object with a taken identity is refused through the stored entries.
        let duplicate = IndexedItem()
        context.insert(duplicate)
        duplicate.handle = Self.identity(7)
        #expect(throws: EventGraphError.self) { try context.save() }
    }

    @Test func aLookupByIndexedAttributeReadsTheStoredIndexAndOnlyTheChunksOfWhatItFinds() throws {
        let directory = TemporaryDirectory()
        try Self.compactedStore(at: directory.file(), count: 20_000)
        let container = try ModelContainer(path: directory.file(), model: Self.model)
        defer { try? container.close() }
        let items = Self.state(of: container).version(ofEntity: Self.itemEntity)
        let context = container.newBackgroundContext()
        // Items 15,000 ... 15,099: all in the fourth entity chunk.
        let found = try Self.fetch(rank: 150, in: context)
        #expect(found == Set((15_000..<15_100).map(Self.identity)))
        #expect(!Self.state(of: container).pendingAttributeIndexEntities.contains(Self.itemEntity))
        #expect(items.unreadChunkCount == 4)
        #expect(Self.state(of: container).storedAttributeIndexes.isEmpty)
    }

    @Test(arguments: [UInt64(1), 7, 20_261_126]) func aTailOfInsertsUpdatesAndDeletesIsAppliedOnTop(seed: UInt64)
        throws
    {
        let seed = ProcessInfo.processInfo.environment["EG_TEST_SEED"].flatMap(UInt64.init) ?? seed
        print("aTailOfInsertsUpdatesAndDeletesIsAppliedOnTop: seed \(seed) (replay with EG_TEST_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        let count = 9_000
        try Self.compactedStore(at: directory.file(), count: count)
        // What the store must answer: identity → rank of every live item.
        var expected: [String: Int64] = [:]
        for index in 0..<count { expected[Self.identity(index)] = Int64(index / 100) }
        var touched: Set<String> = []
        do {
            let container = try ModelContainer(path: directory.file(), model: Self.model)
            let context = container.newBackgroundContext()
            for step in 0..<40 {
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    let identity = Self.identity(Int.random(in: 0..<(count + 200), using: &random))
                    let item = try Self.fetch(identity: identity, in: context).first
                    #expect((item?.rank) == expected[identity], "step \(step): \(identity)")
                    touched.insert(identity)
                    switch (item, Int.random(in: 0..<4, using: &random)) {
                    case (let item?, 0):
                        context.delete(item)
                        expected[identity] = nil
                    case (let item?, 1):
                        // A new identity: the old one must no longer be found through its stale stored entry.
                        let renamed = identity + "-r\(step)"
                        item.handle = renamed
                        expected[identity] = nil
                        expected[renamed] = item.rank
                        touched.insert(renamed)
                    case (let item?, _):
                        item.rank = Int64.random(in: 0...95, using: &random)
                        expected[identity] = item.rank
                    case (nil, _):
                        let fresh = IndexedItem()
                        context.insert(fresh)
                        fresh.handle = identity
                        fresh.rank = Int64.random(in: 0...95, using: &random)
                        expected[identity] = fresh.rank
                    }
                }
                try context.save()
            }
            try Self.expectAnswers(expected, touched: touched, container: container, random: &random, "live")
            try container.close()
        }
        // Reopened: the tail is replayed on top of the stored indexes.
        let container = try ModelContainer(path: directory.file(), model: Self.model)
        defer { try? container.close() }
        try Self.expectAnswers(expected, touched: touched, container: container, random: &random, "reopened")
        #expect(try container.stateDigest() == Self.fullReplayDigest(of: directory.file()))
    }

    /// Every touched identity and some untouched ones are found with their rank (or not at all); every rank finds
    /// exactly the identities that have it.
    static func expectAnswers(
        _ expected: [String: Int64], touched: Set<String>, container: ModelContainer,
        random: inout SeededGenerator, _ phase: String
    ) throws {
        let context = container.newBackgroundContext()
        var probes = touched
        for _ in 0..<50 { probes.insert(identity(Int.random(in: 0..<9_000, using: &random))) }
        for identity in probes.sorted() {
            let found = try fetch(identity: identity, in: context).map { ($0.handle, $0.rank) }
            #expect(
                found.map(\.1) == (expected[identity].map { [$0] } ?? []),
                "\(phase) \(identity): \(found) expected \(String(describing: expected[identity]))")
        }
        var byRank: [Int64: Set<String>] = [:]
        for (identity, rank) in expected { byRank[rank, default: []].insert(identity) }
        for rank in Int64(0)...95 {
            #expect(try fetch(rank: rank, in: context) == byRank[rank] ?? [], "\(phase) rank \(rank)")
        }
    }

    @Test func aDamagedIndexChunkNamesItselfAndLookupsStillAnswerFromTheChunks() throws {
        let directory = TemporaryDirectory()
        let digest = try Self.compactedStore(at: directory.file(), count: 9_000)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: directory.file()))
        // One byte inside the body of the first chunk of each index.
        let file = try #require(FileHandle(forUpdatingAtPath: directory.file()))
        for index in listed.indexes {
            file.seek(toFileOffset: index.chunks[0].byteOffset + 64)
            let byte = file.readData(ofLength: 1)
            file.seek(toFileOffset: index.chunks[0].byteOffset + 64)
            file.write(Data([byte[0] ^ 0x5A]))
        }
        try file.close()

        let container = try ModelContainer(path: directory.file(), model: Self.model)
        defer { try? container.close() }
        let state = Self.state(of: container)
        let unique = try #require(state.storedUniqueIndexes.first)
        let error = #expect(throws: EventGraphError.self) { _ = try unique.chunks[0].load() }
        let message = error?.message ?? ""
        #expect(message.contains(directory.file()), "\(message)")
        #expect(message.contains("uniqueness index (handle) of entity IndexedItem"), "\(message)")
        #expect(message.contains("byte offset \(listed.indexes[0].chunks[0].byteOffset)"), "\(message)")

        let context = container.newBackgroundContext()
        #expect(try Self.fetch(identity: Self.identity(5), in: context).map(\.rank) == [0])
        #expect(try Self.fetch(rank: 3, in: context) == Set((300..<400).map(Self.identity)))
        #expect(try container.stateDigest() == digest)
    }

    @Test func verifyComparesEachStoredIndexWithTheCheckpointsObjects() throws {
        let directory = TemporaryDirectory()
        try Self.compactedStore(at: directory.file(), count: 5_000)
        #expect(try Self.storedIndexIssues(of: directory.file()).isEmpty)

        // The same checkpoint rewritten with one entry of the uniqueness index pointing at another key: every frame
        // verifies, so only the comparison with the objects finds it.
        let path = directory.file()
        var schema: SchemaPayload?
        var begin: CheckpointBegin?
        var end: CheckpointEnd?
        var chunks: [CheckpointChunk] = []
        try LogReader(path: path).scan { record in
            switch record {
            case .schema(let found, _): schema = found
            case .checkpointBegin(let found, _): begin = found
            case .checkpointChunk(let chunk, _): chunks.append(chunk)
            case .checkpointEnd(let found, _): end = found
            default: break
            }
        }
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let reader = try LogReader(path: path)
        let writer = try LogWriter(path: path)
        _ = try writer.rewrite(schema: try #require(schema), begin: try #require(begin), end: try #require(end)) {
            sink in
            for chunk in chunks { try sink.appendEntityChunk(chunk) }
            for index in listed.indexes {
                for (position, entry) in index.chunks.enumerated() {
                    var chunk = try reader.readIndexChunk(
                        entry, arity: Int(index.arity), checkpointTransactionID: begin!.lastTransactionID)
                    if index.kind == .unique && position == 0 { chunk.keys[1] = chunk.keys[2] }
                    try sink.appendIndexChunk(chunk, of: index)
                }
            }
        }
        try writer.close()
        let issues = try Self.storedIndexIssues(of: path)
        #expect(issues.count == 1)
        #expect(issues.first?.message.contains("uniqueness index #0 of entity IndexedItem") == true, "\(issues)")
        #expect(issues.first?.message.contains("first differ at entry 1") == true, "\(issues)")
    }

    /// The stored-index issues `egctl verify` reports for the log at `path`.
    static func storedIndexIssues(of path: String) throws -> [IntegrityIssue] {
        var graph = LogGraph(source: path)
        graph.checksStoredIndexes = true
        try LogReader(path: path).scan { record in try graph.apply(record) }
        return graph.integrityIssues().filter { $0.kind == .storedIndexMismatch }
    }

    @Test func aStoreWhoseCheckpointHasNoIndexesBuildsThemAsBefore() throws {
        // The 1.3 layout: the same checkpoint without index chunks (the directory of payload version 1).
        let directory = TemporaryDirectory()
        try Self.compactedStore(at: directory.file(), count: 5_000)
        let container = try ModelContainer(path: directory.file(), model: Self.model)
        var state = Self.state(of: container)
        state.storedUniqueIndexes = []
        state.storedAttributeIndexes = [:]
        state.pendingUniqueEntities.insert(Self.itemEntity)
        container.store.state.withLock { $0 = state }
        let context = container.newBackgroundContext()
        #expect(try Self.fetch(identity: Self.identity(4_321), in: context).map(\.rank) == [43])
        #expect(try Self.fetch(rank: 7, in: context) == Set((700..<800).map(Self.identity)))
        try container.close()
    }
}
