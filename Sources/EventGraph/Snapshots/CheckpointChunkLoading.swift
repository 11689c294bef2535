import LogFormat

/// Where a store reads the entity chunks of its checkpoint from (format 1.3, `Docs/FileFormat-Checkpoints.md`): the
/// log file as it was when the store opened it. The reader holds that file open, so a compaction that renames a new
/// file over the path later does not move the chunks a version of the state still has to load.
struct CheckpointChunkSource: Sendable {
    let reader: LogReader
    /// The checkpoint's last transaction, which every one of its entity chunks carries.
    let checkpointTransactionID: UInt64

    /// Reads, verifies and decodes chunk `chunkIndex` of an entity (`pread`; safe from any thread).
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the entity, the chunk and its byte offset when the
    ///   chunk is damaged or cannot be read. The LogFormat error is not attached as the underlying one on purpose:
    ///   a damaged *frame* makes the container advise a read-only view up to the damage, which a damaged chunk of
    ///   the checkpoint the view would start from cannot offer yet.
    func load(_ entry: EntityChunkEntry, chunkIndex: Int, entityIndex: Int, entityName: String)
        throws(EventGraphError) -> CheckpointChunk
    {
        do {
            return try reader.readEntityChunk(
                entry, entityIndex: UInt32(entityIndex), checkpointTransactionID: checkpointTransactionID)
        } catch {
            throw EventGraphError(
                .log,
                "\(reader.path): chunk \(chunkIndex) of entity \(entityName) (byte offset \(entry.byteOffset)) in the "
                    + "checkpoint at transaction \(checkpointTransactionID) cannot be loaded: \(error.message)")
        }
    }
}
