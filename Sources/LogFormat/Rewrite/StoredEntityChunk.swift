/// One checkpoint-entity-chunk frame of a checkpoint as its file stores it (its body compressed or not, as the
/// frame's codec says), read and verified (``LogReader/storedEntityChunk(_:entityIndex:checkpointTransactionID:)``)
/// so that a rewrite copies it into the new checkpoint without decompressing, decoding or encoding it again
/// (``CheckpointSink/appendEntityChunks(count:content:)``): only its header is new (sequence, transaction, the new
/// file's checksums).
///
/// The caller copies a chunk only when encoding its objects now would give the same payload: the chunk is unchanged
/// since that checkpoint, under the same schema and the same table of foreign stores.
package struct StoredEntityChunk: Sendable {
    /// The entity whose objects the chunk holds.
    package let entityIndex: UInt32
    /// What the old checkpoint's directory lists about it (its byte offset there is not used again).
    package let entry: EntityChunkEntry
    let codec: FrameCodec
    /// The length of the payload the body decompresses to.
    let rawByteCount: UInt32
    /// The body as stored: what the new frame carries.
    let body: [UInt8]

    /// The frame body for a new file: the same stored bytes, checksummed with that file's seed, in a frame of the
    /// new checkpoint (`transactionID`).
    func encodedBody(seed: UInt32, transactionID: UInt64) -> EncodedBody {
        EncodedBody(
            type: .checkpointEntityChunk, codec: codec, transactionID: transactionID, partIndex: 0,
            rawByteCount: rawByteCount, body: body, bodyChecksum: CRC32C.checksum(body, continuing: seed))
    }
}

/// What a rewrite writes as one entity chunk: a payload encoded now, or a chunk of the old checkpoint copied as
/// stored.
package enum EntityChunkContent: Sendable {
    case encoded(EntityChunkPayload)
    case stored(StoredEntityChunk)
}

extension LogReader {
    /// Reads one entity chunk of a checkpoint by its directory entry as stored, without decompressing or decoding
    /// it: the frame's header, body checksum and padding verify, and it is a checkpoint-entity-chunk frame of the
    /// checkpoint at `checkpointTransactionID` (what ``visitEntityChunk(_:entityIndex:checkpointTransactionID:visitor:)``
    /// checks before it decodes). Safe to call from any thread (`pread`).
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` naming the byte offset when any check fails, or an I/O error.
    package func storedEntityChunk(_ entry: EntityChunkEntry, entityIndex: UInt32, checkpointTransactionID: UInt64)
        throws(LogFormatError) -> StoredEntityChunk
    {
        let offset = entry.byteOffset
        let (frameHeader, body): (FrameHeader, [UInt8])
        do throws(LogFormatError) {
            (frameHeader, body) = try readStoredFrame(at: offset)
        } catch  where error.code == .invalidArgument {
            throw damagedChunk("checkpoint chunk", at: offset, "cannot be read: \(error.message)")
        }
        guard frameHeader.type == .checkpointEntityChunk, frameHeader.transactionID == checkpointTransactionID else {
            throw damagedChunk(
                "checkpoint chunk", at: offset,
                "is a \(frameHeader.type) frame of transaction \(frameHeader.transactionID), not a "
                    + "\(FrameType.checkpointEntityChunk) frame of the checkpoint at transaction \(checkpointTransactionID)"
            )
        }
        return StoredEntityChunk(
            entityIndex: entityIndex, entry: entry, codec: frameHeader.codec, rawByteCount: frameHeader.rawByteCount,
            body: body)
    }
}
