/// One checkpoint-index-chunk frame of a checkpoint as its file stores it, read and verified
/// (``LogReader/storedIndexChunk(_:checkpointTransactionID:)``) so that a rewrite copies it into the new checkpoint
/// without decompressing, decoding or encoding it again (``CheckpointSink/appendIndexChunks(of:chunkCounts:content:)``):
/// only its header is new (sequence, transaction, the new file's checksums), and the directory lists it with the
/// entry count and bounds the old directory gave it.
///
/// The caller copies an index's chunks only when building the index now would give the same entries: no object of its
/// entity changed since that checkpoint, and the index is the one the model declares, its values in the same order.
package struct StoredIndexChunk: Sendable {
    /// What the old checkpoint's directory lists about it (its byte offset there is not used again).
    package let entry: IndexChunkEntry
    let codec: FrameCodec
    /// The length of the payload the body decompresses to.
    let rawByteCount: UInt32
    /// The body as stored: what the new frame carries.
    let body: [UInt8]

    /// The frame body for a new file: the same stored bytes, checksummed with that file's seed, in a frame of the
    /// new checkpoint (`transactionID`).
    func encodedBody(seed: UInt32, transactionID: UInt64) -> EncodedBody {
        EncodedBody(
            type: .checkpointIndexChunk, codec: codec, transactionID: transactionID, partIndex: 0,
            rawByteCount: rawByteCount, body: body, bodyChecksum: CRC32C.checksum(body, continuing: seed))
    }
}

/// What a rewrite writes as one index chunk: entries to encode now, or a chunk of the old checkpoint copied as stored.
package enum IndexChunkContent: Sendable {
    case built(CheckpointIndexChunk)
    case stored(StoredIndexChunk)
}

extension LogReader {
    /// Reads one index chunk of a checkpoint by its directory entry as stored, without decompressing or decoding it:
    /// the frame's header, body checksum and padding verify, and it is a checkpoint-index-chunk frame of the
    /// checkpoint at `checkpointTransactionID`. Safe to call from any thread (`pread`).
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` naming the byte offset when any check fails, or an I/O error.
    package func storedIndexChunk(_ entry: IndexChunkEntry, checkpointTransactionID: UInt64)
        throws(LogFormatError) -> StoredIndexChunk
    {
        let offset = entry.byteOffset
        let (frameHeader, body): (FrameHeader, [UInt8])
        do throws(LogFormatError) {
            (frameHeader, body) = try readStoredFrame(at: offset)
        } catch  where error.code == .invalidArgument {
            throw damagedChunk("checkpoint index chunk", at: offset, "cannot be read: \(error.message)")
        }
        guard frameHeader.type == .checkpointIndexChunk, frameHeader.transactionID == checkpointTransactionID else {
            throw damagedChunk(
                "checkpoint index chunk", at: offset,
                "is a \(frameHeader.type) frame of transaction \(frameHeader.transactionID), not a "
                    + "\(FrameType.checkpointIndexChunk) frame of the checkpoint at transaction \(checkpointTransactionID)"
            )
        }
        return StoredIndexChunk(
            entry: entry, codec: frameHeader.codec, rawByteCount: frameHeader.rawByteCount, body: body)
    }
}
