import Foundation
import Testing

@testable import LogFormat

/// Checkpoints in the chunk layout (format 1.3, `Docs/FileFormat-Checkpoints.md`): entity chunks and the directory
/// that lists them. A tool's scan reads entity chunks like ordinary chunks; the store's scan defers their bodies and
/// loads each by its directory entry, checking everything the directory claims against the frame.
@Suite("Checkpoint directory and entity chunks")
struct CheckpointDirectoryTests {
    static let begin = CheckpointBegin(
        lastTransactionID: 2, lastCommitTimeMicroseconds: 1_700_000_000, nextKey: 9_000, objectCount: 5_000)
    static let end = CheckpointEnd(objectCount: 5_000, stateDigest: [1, 2, 3])

    /// `count` objects of `entity`, keys from `firstKey`, each with a string.
    static func chunk(entity: UInt32, firstKey: UInt64, count: Int) -> CheckpointChunk {
        CheckpointChunk(
            records: (0..<UInt64(count)).map { offset in
                ObjectRecord(
                    object: ObjectReference(entityIndex: entity, key: firstKey + offset),
                    properties: [PropertyChange(propertyIndex: 0, value: .attribute(.string("object \(offset)")))])
            })
    }

    /// Entity 0: chunks of 4,096 and 900 objects; entity 1: one chunk of 4 objects.
    static let chunks = [
        chunk(entity: 0, firstKey: 1, count: 4_096), chunk(entity: 0, firstKey: 5_000, count: 900),
        chunk(entity: 1, firstKey: 8_000, count: 4),
    ]

    /// Writes transactions 1...3 and rewrites the log with a checkpoint at transaction 2 in the chunk layout.
    static func compact(_ path: String) throws {
        let writer = try LogWriter(path: path)
        defer { try? writer.close() }
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...3 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
        }
        _ = try writer.rewrite(schema: PayloadFixtures.schema, begin: begin, end: end) { sink in
            for chunk in chunks { try sink.appendEntityChunk(chunk) }
        }
    }

    /// What a scan delivers: the chunks, the directory, and how the scan ended.
    static func scan(_ path: String, deferring: Bool) throws -> ([CheckpointChunk], CheckpointDirectory?, ScanReport) {
        var chunks: [CheckpointChunk] = []
        var directory: CheckpointDirectory?
        let report = try LogReader(path: path).scan(defersEntityChunkBodies: deferring) { record in
            if case .checkpointChunk(let chunk, _) = record { chunks.append(chunk) }
            if case .checkpointDirectory(let found, _) = record { directory = found }
        }
        return (chunks, directory, report)
    }

    @Test func aCheckpointInTheChunkLayoutReadsWholeForToolsAndByDirectoryForTheStore() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("layout.eglog")
        try Self.compact(path)
        #expect(try LogReader(path: path).header.minorVersion == LogFileHeader.currentMinorVersion)

        let frames = try FrameMap.frames(in: path).filter {
            [.checkpointEntityChunk, .checkpointDirectory].contains($0.header.type)
        }
        #expect(
            frames.map(\.header.type) == [
                .checkpointEntityChunk, .checkpointEntityChunk, .checkpointEntityChunk, .checkpointDirectory,
            ])

        let (whole, listed, report) = try Self.scan(path, deferring: false)
        #expect(whole == Self.chunks)
        #expect(report.tail == .clean && report.lastTransactionID == 3)
        let found = try #require(listed)
        #expect(found.entities.map(\.entityIndex) == [0, 1])
        #expect(found.allChunks.map(\.byteOffset) == frames.dropLast().map(\.byteOffset))
        #expect(found.allChunks.map(\.objectCount) == [4_096, 900, 4])
        #expect(found.allChunks.map(\.minKey) == [1, 5_000, 8_000])
        #expect(found.allChunks.map(\.maxKey) == [4_096, 5_899, 8_003])

        let (deferred, deferredDirectory, deferredReport) = try Self.scan(path, deferring: true)
        #expect(deferred.isEmpty)
        #expect(deferredDirectory == found)
        #expect(deferredReport.tail == .clean)
        let reader = try LogReader(path: path)
        for (entity, chunks) in zip(found.entities, [Array(Self.chunks[0...1]), [Self.chunks[2]]]) {
            for (entry, chunk) in zip(entity.chunks, chunks) {
                #expect(
                    try reader.readEntityChunk(entry, entityIndex: entity.entityIndex, checkpointTransactionID: 2)
                        == chunk)
            }
        }
    }

    @Test func damageInsideAnEntityChunkIsFoundByAFullScanAndByItsLoadNotByTheDeferredScan() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("damaged.eglog")
        try Self.compact(path)
        let second = try #require(
            try FrameMap.frames(in: path).filter { $0.header.type == .checkpointEntityChunk }.dropFirst().first)
        try LogFileSurgery.flipBit(path, byteOffset: second.bodyByteOffset + 40, bit: 3)

        let (_, _, full) = try Self.scan(path, deferring: false)
        guard case .damaged(let damage) = full.tail else {
            Issue.record("a full scan did not find the damage: \(full.tail)")
            return
        }
        #expect(damage.byteOffset == second.byteOffset)

        let (_, listed, deferred) = try Self.scan(path, deferring: true)
        #expect(deferred.tail == .clean)
        let entry = try #require(listed?.entities.first?.chunks.last)
        #expect(entry.byteOffset == second.byteOffset)
        let error = #expect(throws: LogFormatError.self) {
            try LogReader(path: path).readEntityChunk(entry, entityIndex: 0, checkpointTransactionID: 2)
        }
        #expect(error?.code == .damaged)
        #expect(error?.byteOffset == second.byteOffset)
    }

    /// A directory entry that does not match its frame (another entity, another count, keys outside the range,
    /// another checkpoint, an offset that is not an entity chunk) is damage when the chunk is loaded.
    @Test(arguments: ["entity", "count", "keys", "transaction", "offset"])
    func aDirectoryEntryThatDoesNotMatchItsFrameFailsTheLoad(_ mismatch: String) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("mismatch.eglog")
        try Self.compact(path)
        let (_, listed, _) = try Self.scan(path, deferring: true)
        var entry = try #require(listed?.entities.first?.chunks.last)
        var entity: UInt32 = 0
        var transaction: UInt64 = 2
        switch mismatch {
        case "entity": entity = 1
        case "count": entry.objectCount -= 1
        case "keys": entry.maxKey -= 1
        case "transaction": transaction = 3
        default: entry.byteOffset = LogFileHeader.framesByteOffset
        }
        let error = #expect(throws: LogFormatError.self) {
            try LogReader(path: path).readEntityChunk(entry, entityIndex: entity, checkpointTransactionID: transaction)
        }
        #expect(error?.code == .damaged)
        #expect(error?.message.contains("byte offset \(entry.byteOffset)") == true)
    }

    @Test func aDirectoryRoundTrips() throws {
        let directory = CheckpointDirectory(entities: [
            EntityChunks(
                entityIndex: 0,
                chunks: [
                    EntityChunkEntry(byteOffset: 1024, objectCount: 4096, minKey: 1, maxKey: 4096),
                    EntityChunkEntry(byteOffset: 1 << 40, objectCount: 1, minKey: .max, maxKey: .max),
                ]),
            EntityChunks(
                entityIndex: 65_535,
                chunks: [EntityChunkEntry(byteOffset: (1 << 40) + 8, objectCount: 7, minKey: 0, maxKey: 0)]),
        ])
        #expect(try CheckpointDirectory(decoding: try directory.encoded()) == directory)
    }

    /// Hostile directories: every number is checked before it is used or allocated for.
    @Test(
        arguments: [
            ("no entities but a huge count", [1, 0xFF, 0xFF, 0x03]),
            ("an entity listing no chunks", [1, 1, 0, 0, 0, 0, 0, 0]),
            ("a chunk count larger than the bytes left", [1, 1, 0, 0xFF, 0x7F, 0x80, 0x08, 1, 1, 1]),
            ("an offset inside the header region", [1, 1, 0, 1, 0x80, 0x07, 1, 1, 1]),
            ("an offset that is not 8-aligned", [1, 1, 0, 1, 0x81, 0x08, 1, 1, 1]),
            ("no objects", [1, 1, 0, 1, 0x80, 0x08, 0, 1, 1]),
            ("4,097 objects", [1, 1, 0, 1, 0x80, 0x08, 0x81, 0x20, 1, 1]),
            ("keys out of order", [1, 1, 0, 1, 0x80, 0x08, 1, 2, 1]),
            ("offsets that do not increase", [1, 1, 0, 2, 0x80, 0x08, 1, 1, 1, 0x80, 0x08, 1, 1, 1]),
            ("entities out of order", [1, 2, 1, 1, 0x80, 0x08, 1, 1, 1, 0, 1, 0x88, 0x08, 1, 1, 1]),
            ("an entity index at the limit", [1, 1, 0x80, 0x80, 0x04, 1, 0x80, 0x08, 1, 1, 1]),
            ("trailing bytes", [1, 1, 0, 1, 0x80, 0x08, 1, 1, 1, 0]),
        ] as [(String, [UInt8])])
    func aHostileDirectoryIsRefused(_ what: String, _ bytes: [UInt8]) {
        let error = #expect(throws: LogFormatError.self, "\(what)") { try CheckpointDirectory(decoding: bytes) }
        #expect(error?.code == .malformedPayload, "\(what)")
    }

    @Test func theValidBaseOfTheHostileCasesDecodes() throws {
        let directory = try CheckpointDirectory(decoding: [1, 1, 0, 1, 0x80, 0x08, 1, 1, 1])
        #expect(directory.allChunks == [EntityChunkEntry(byteOffset: 1024, objectCount: 1, minKey: 1, maxKey: 1)])
    }
}
