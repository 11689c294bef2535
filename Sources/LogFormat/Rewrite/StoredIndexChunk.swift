/// One checkpoint-index-chunk frame of a checkpoint as its file stores it, read and verified
/// (``LogReader/storedIndexChunk(_:checkpointTransactionID:)``) so that a rewrite copies it into the new checkpoint
/// without decompressing, decoding or encoding it again (``CheckpointSink/appendIndexChunks(of:chunkCounts:content:)``):
/// only its header is new, and the directory lists it with the entry count and bounds the old directory gave it.
///
/// The caller copies an index's chunks only when building the index now would give the same entries: no object of its
/// entity changed since that checkpoint, and the index is the one the model declares, its values in the same order.
package struct StoredIndexChunk: Sendable {
    /// What the old checkpoint's directory lists about it (its byte offset there is not used again).
    package let entry: IndexChunkEntry
    let frame: StoredCheckpointFrame
}

/// What a rewrite writes as one index chunk: entries to encode now, or a chunk of the old checkpoint copied as stored.
package enum IndexChunkContent: Sendable {
    case built(CheckpointIndexChunk)
    case stored(StoredIndexChunk)
}

extension LogReader {
    /// Reads one index chunk of a checkpoint by its directory entry as stored, without decompressing or decoding it
    /// (``storedCheckpointFrame(at:type:what:checkpointTransactionID:)``). Safe to call from any thread (`pread`).
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` naming the byte offset when any check fails, or an I/O error.
    package func storedIndexChunk(_ entry: IndexChunkEntry, checkpointTransactionID: UInt64)
        throws(LogFormatError) -> StoredIndexChunk
    {
        StoredIndexChunk(
            entry: entry,
            frame: try storedCheckpointFrame(
                at: entry.byteOffset, type: .checkpointIndexChunk, what: "checkpoint index chunk",
                checkpointTransactionID: checkpointTransactionID))
    }
}
