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
    let frame: StoredCheckpointFrame

    /// The length of the payload the body decompresses to.
    var rawByteCount: UInt32 { frame.rawByteCount }

    /// The frame body for a new file (``StoredCheckpointFrame/encodedBody(seed:transactionID:)``).
    func encodedBody(seed: UInt32, transactionID: UInt64) -> EncodedBody {
        frame.encodedBody(seed: seed, transactionID: transactionID)
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
        StoredEntityChunk(
            entityIndex: entityIndex, entry: entry,
            frame: try storedCheckpointFrame(
                at: entry.byteOffset, type: .checkpointEntityChunk, what: "checkpoint chunk",
                checkpointTransactionID: checkpointTransactionID))
    }
}
