import Foundation

@testable import LogFormat

/// Builds a log file frame by frame with any value in any field, forging every checksum with the file's own UUID
/// exactly as the real writer computes it — what anyone who has read the format can do.
struct CraftedLog {
    let header: LogFileHeader
    private(set) var bytes: [UInt8]
    private(set) var nextSequence: UInt64

    init(header: LogFileHeader = LogFileHeader(storeUUID: .random())) {
        self.header = header
        self.bytes = header.encodedRegion()
        self.nextSequence = header.baseSequence
    }

    /// Appends a frame numbered `sequence` (the next one by default) whose watermark proves every frame before it,
    /// as a writer in `full` durability would.
    mutating func append(_ frame: OutgoingFrame, sequence: UInt64? = nil) throws {
        try append(encoded: try frame.encodeBody(seed: header.checksumSeed, dictionary: nil), sequence: sequence)
    }

    /// Appends `frame` LZ4-compressed (its payload must compress) with a raw length one more than its block
    /// decompresses to, every checksum forged: a frame that verifies but whose LZ4 block does not decompress.
    mutating func appendUndecompressible(_ frame: OutgoingFrame) throws {
        var body = try frame.encodeBody(seed: header.checksumSeed, dictionary: nil)
        precondition(body.codec == .lz4, "the payload must compress")
        body.rawByteCount += 1
        try append(encoded: body)
    }

    private mutating func append(encoded body: EncodedBody, sequence: UInt64? = nil) throws {
        let seed = header.checksumSeed
        let number = sequence ?? nextSequence
        body.append(to: &bytes, sequence: number, durableWatermark: UInt64(bytes.count), seed: seed)
        nextSequence = number &+ 1
    }

    /// A model of one entity, `Item`, with an optional string `name`: objects of it can be inserted and saved.
    static let schema = SchemaPayload(
        modelName: "Crafted", versionIdentifier: "1", modelHash: 0xC0FFEE,
        entities: [EntitySchema(name: "Item", properties: [.attribute(AttributeSchema(name: "name", type: .string))])])

    mutating func appendSchema() throws {
        try append(OutgoingFrame(type: .schema, payload: try Self.schema.encoded()))
    }

    /// A changeset inserting `Item` number `key`.
    static func insert(transactionID: UInt64, key: UInt64, nextKey: UInt64) -> Changeset {
        Changeset(
            transactionID: transactionID, commitTimeMicroseconds: 1_700_000_000_000_000, author: "crafted",
            nextKey: nextKey,
            operations: [
                .insert(
                    ObjectReference(entityIndex: 0, key: key),
                    [PropertyChange(propertyIndex: 0, value: .attribute(.string("item \(key)")))])
            ])
    }

    mutating func appendTransaction(_ changeset: Changeset) throws {
        try append(
            OutgoingFrame(
                type: .transaction, transactionID: changeset.transactionID, payload: try changeset.encoded()))
    }

    /// A transaction of `count` fragments, each `fragment` (at most 16 MiB; LZ4 shrinks zeros 250-fold).
    mutating func appendFragments(transactionID: UInt64, count: Int, first: [UInt8], fragment: [UInt8]) throws {
        for index in 0..<count {
            let type: FrameType =
                index == 0 ? .transactionFirst : index == count - 1 ? .transactionLast : .transactionMiddle
            try append(
                OutgoingFrame(
                    type: type, transactionID: transactionID, partIndex: UInt32(index),
                    payload: index == 0 ? first : fragment))
        }
    }

    /// An empty checkpoint at transaction 0 whose one chunk is `count` fragments (format 1.2), each `fragment`.
    mutating func appendCheckpoint(chunkFragmentCount count: Int, fragment: [UInt8]) throws {
        let begin = CheckpointBegin(lastTransactionID: 0, lastCommitTimeMicroseconds: 0, nextKey: 1, objectCount: 0)
        try append(OutgoingFrame(type: .checkpointBegin, payload: try begin.encoded()))
        for index in 0..<count {
            try append(
                OutgoingFrame(
                    type: FragmentKind.checkpointChunk.type(ofFragment: index, count: count),
                    partIndex: UInt32(index), payload: fragment))
        }
        let end = CheckpointEnd(objectCount: 0, stateDigest: [])
        try append(OutgoingFrame(type: .checkpointEnd, payload: try end.encoded()))
    }

    mutating func appendSeal() throws { try append(OutgoingFrame(type: .seal, payload: [])) }

    /// Writes a value into a field of both header copies and recomputes their checksums.
    mutating func forgeHeaderField(at fieldOffset: Int, _ value: [UInt8]) {
        for start in [0, LogFileHeader.secondCopyByteOffset] {
            bytes.replaceSubrange((start + fieldOffset)..<(start + fieldOffset + value.count), with: value)
            let crc = CRC32C.checksum(Array(bytes[start..<(start + 124)]))
            bytes.replaceSubrange(
                (start + 124)..<(start + 128), with: withUnsafeBytes(of: crc.littleEndian, Array.init))
        }
    }

    func write(to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
}
