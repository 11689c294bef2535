import Foundation
import Testing

@testable import LogFormat

/// Stored indexes (format 1.4, `Docs/FileFormat-Checkpoints.md` §7): the directory's index list (payload version 2)
/// and the index chunk payload. Every number is checked before it is used or allocated for.
@Suite("Checkpoint index chunks and the directory's index list")
struct CheckpointIndexChunkTests {
    /// One entity chunk at 1024; then, in hostile cases, the index list.
    static let entityPart: [UInt8] = [1, 0, 1, 0x80, 0x08, 1, 1, 1]
    /// A valid index list: one unique index of entity 0, one chunk at 1032 holding one entry, bounds null … null.
    static let validIndexes: [UInt8] = [1, 0, 0, 0, 0, 1, 1, 0x88, 0x08, 1, 0x00, 0x00]

    @Test func aDirectoryWithIndexesRoundTripsAsVersion2AndOneWithoutStaysVersion1() throws {
        let entities = [
            EntityChunks(
                entityIndex: 0, chunks: [EntityChunkEntry(byteOffset: 1024, objectCount: 2, minKey: 1, maxKey: 2)])
        ]
        let indexes = [
            IndexChunks(
                kind: .unique, entityIndex: 0, ownerEntityIndex: 0, ordinal: 0, arity: 2,
                chunks: [
                    IndexChunkEntry(
                        byteOffset: 2048, entryCount: 2, firstValues: [.string("a"), .int64(-1)],
                        lastValues: [.string("b"), .null])
                ]),
            IndexChunks(
                kind: .attribute, entityIndex: 0, ownerEntityIndex: 0, ordinal: 3, arity: 1,
                chunks: [
                    IndexChunkEntry(byteOffset: 4096, entryCount: 4096, firstValues: [.null], lastValues: [.double(2)]),
                    IndexChunkEntry(
                        byteOffset: 8192, entryCount: 1, firstValues: [.double(3)], lastValues: [.double(3)]),
                ]),
        ]
        let withIndexes = CheckpointDirectory(entities: entities, indexes: indexes)
        let bytes = try withIndexes.encoded()
        #expect(bytes.first == 2)
        #expect(try CheckpointDirectory(decoding: bytes) == withIndexes)
        #expect(withIndexes.allIndexChunkOffsets == [2048, 4096, 8192])
        let without = CheckpointDirectory(entities: entities)
        #expect(try without.encoded().first == 1)
        #expect(try CheckpointDirectory(decoding: try without.encoded()) == without)
    }

    @Test func theValidBaseOfTheHostileCasesDecodes() throws {
        let directory = try CheckpointDirectory(decoding: [2] + Self.entityPart + Self.validIndexes)
        #expect(directory.indexes.count == 1)
        #expect(directory.allIndexChunkOffsets == [1032])
    }

    @Test(
        arguments: [
            ("a huge index count", [0xFF, 0xFF, 0x03]),
            ("an unknown kind", [1, 2, 0, 0, 0, 1, 1, 0x88, 0x08, 1, 0, 0]),
            ("arity 0", [1, 0, 0, 0, 0, 0, 1, 0x88, 0x08, 1]),
            ("arity 17", [1, 0, 0, 0, 0, 17, 1, 0x88, 0x08, 1] + Array(repeating: 0, count: 34)),
            ("an attribute index of arity 2", [1, 1, 0, 0, 0, 2, 1, 0x88, 0x08, 1, 0, 0, 0, 0]),
            ("an attribute index owned by another entity", [1, 1, 0, 1, 0, 1, 1, 0x88, 0x08, 1, 0, 0]),
            ("an index without chunks", [1, 0, 0, 0, 0, 1, 0]),
            ("a chunk count larger than the bytes left", [1, 0, 0, 0, 0, 1, 0x7F, 0x88, 0x08, 1, 0, 0]),
            ("an index chunk before the entity chunk", [1, 0, 0, 0, 0, 1, 1, 0x80, 0x08, 1, 0, 0]),
            ("an index chunk offset not 8-aligned", [1, 0, 0, 0, 0, 1, 1, 0x89, 0x08, 1, 0, 0]),
            ("no entries", [1, 0, 0, 0, 0, 1, 1, 0x88, 0x08, 0, 0, 0]),
            ("4,097 entries", [1, 0, 0, 0, 0, 1, 1, 0x88, 0x08, 0x81, 0x20, 0, 0]),
            ("an unknown value tag", [1, 0, 0, 0, 0, 1, 1, 0x88, 0x08, 1, 0x1F, 0]),
            (
                "indexes out of order",
                [2, 1, 0, 0, 0, 1, 1, 0x88, 0x08, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0x90, 0x08, 1, 0, 0]
            ),
            (
                "the same index twice",
                [2, 0, 0, 0, 0, 1, 1, 0x88, 0x08, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0x90, 0x08, 1, 0, 0]
            ),
            ("an entity index at the limit", [1, 0, 0x80, 0x80, 0x04, 0, 0, 1, 1, 0x88, 0x08, 1, 0, 0]),
            ("trailing bytes", validIndexes + [0]),
        ] as [(String, [UInt8])])
    func aHostileIndexListIsRefused(_ what: String, _ indexes: [UInt8]) {
        let error = #expect(throws: LogFormatError.self, "\(what)") {
            try CheckpointDirectory(decoding: [2] + Self.entityPart + indexes)
        }
        #expect(error?.code == .malformedPayload, "\(what)")
    }

    @Test func aDirectoryOfANewerPayloadVersionIsUnsupportedNotMisread() {
        let error = #expect(throws: LogFormatError.self) {
            try CheckpointDirectory(decoding: [3] + Self.entityPart + Self.validIndexes)
        }
        #expect(error?.code == .unsupportedVersion)
    }

    @Test func anIndexChunkRoundTrips() throws {
        let chunk = CheckpointIndexChunk(
            arity: 2,
            entries: [
                CheckpointIndexEntry(values: [.string("a"), .int32(1)], key: 7),
                CheckpointIndexEntry(values: [.string("a"), .int32(2)], key: 1 << 60),
            ])
        #expect(try CheckpointIndexChunk(decoding: try chunk.encoded()) == chunk)
    }

    @Test(
        arguments: [
            ("arity 0", [1, 0, 1, 1]),
            ("arity 17", [1, 17, 1, 1] + Array(repeating: 0, count: 17)),
            ("no entries", [1, 1, 0]),
            ("4,097 entries", [1, 1, 0x81, 0x20] + Array(repeating: 0, count: 8194)),
            ("a count larger than the bytes left", [1, 1, 0x7F, 1, 0]),
            ("a truncated value", [1, 1, 1, 1, 0x08, 5, 0x61]),
            ("trailing bytes", [1, 1, 1, 1, 0, 0]),
        ] as [(String, [UInt8])])
    func aHostileIndexChunkIsRefused(_ what: String, _ bytes: [UInt8]) {
        let error = #expect(throws: LogFormatError.self, "\(what)") { try CheckpointIndexChunk(decoding: bytes) }
        #expect(error?.code == .malformedPayload, "\(what)")
    }

    /// A chunk holds its entries flat (a key array and a value array, `arity` values per key): made from the flat
    /// arrays or from entries, it is the same chunk, encodes to the same bytes and gives the same entries back.
    @Test func aFlatIndexChunkIsTheChunkOfItsEntries() throws {
        let entries = [
            CheckpointIndexEntry(values: [.string("a"), .int32(1)], key: 7),
            CheckpointIndexEntry(values: [.string("a"), .null], key: 9),
            CheckpointIndexEntry(values: [.string("b"), .int32(-2)], key: 1 << 60),
        ]
        let flat = CheckpointIndexChunk(
            arity: 2, keys: [7, 9, 1 << 60],
            values: [.string("a"), .int32(1), .string("a"), .null, .string("b"), .int32(-2)])
        let fromEntries = CheckpointIndexChunk(arity: 2, entries: entries)
        #expect(flat == fromEntries)
        #expect(try flat.encoded() == fromEntries.encoded())
        #expect(flat.entries == entries)
        #expect(flat.entryCount == 3)
        #expect(Array(flat.values(ofEntry: 1)) == [.string("a"), .null])
        let decoded = try CheckpointIndexChunk(decoding: try flat.encoded())
        #expect(decoded == flat)
        #expect(decoded.keys == [7, 9, 1 << 60])
    }

    @Test func anIndexChunkOfTheWrongShapeIsNotWritten() {
        // Flat values that are not `arity` per key.
        #expect(throws: LogFormatError.self) {
            try CheckpointIndexChunk(arity: 2, keys: [1, 2], values: [.null, .null, .null]).encoded()
        }
        // Entries of the wrong counts whose values add up to `arity` per key all the same.
        #expect(throws: LogFormatError.self) {
            try CheckpointIndexChunk(
                arity: 2,
                entries: [
                    CheckpointIndexEntry(values: [.null, .null, .null], key: 1),
                    CheckpointIndexEntry(values: [.null], key: 2),
                ]
            ).encoded()
        }
        #expect(throws: LogFormatError.self) { try CheckpointIndexChunk(arity: 1, entries: []).encoded() }
        #expect(throws: LogFormatError.self) {
            try CheckpointIndexChunk(arity: 1, entries: [CheckpointIndexEntry(values: [.null, .null], key: 1)])
                .encoded()
        }
    }
}
