extension LogReader {
    /// Reads, verifies and decodes one checkpoint entity chunk by its directory entry (format 1.3): the first touch
    /// of a chunk whose body the store's open left unread. Safe to call from any thread (`pread`).
    ///
    /// Everything the directory and the frame say is checked against each other (`Docs/FileFormat-Checkpoints.md`
    /// §3): the frame verifies and is an entity chunk of this checkpoint; it holds exactly `entry.objectCount`
    /// records, every one of entity `entityIndex` in this store, with keys in `entry.minKey ... entry.maxKey`.
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` naming the byte offset when any check fails (the checkpoint had been
    ///   synced before the file was renamed into place, so a chunk that fails is damage), or an I/O error.
    package func readEntityChunk(_ entry: EntityChunkEntry, entityIndex: UInt32, checkpointTransactionID: UInt64)
        throws(LogFormatError) -> CheckpointChunk
    {
        try visitEntityChunk(
            entry, entityIndex: entityIndex, checkpointTransactionID: checkpointTransactionID,
            visitor: CheckpointChunkCollector()
        ).chunk
    }

    /// Reads and verifies one checkpoint entity chunk as ``readEntityChunk(_:entityIndex:checkpointTransactionID:)``
    /// does, decoding it into `visitor` (see ``CheckpointChunkVisitor``) instead of into records; returns the
    /// visitor. The checks against the directory are the same, and fail after the payload has been decoded (a
    /// payload that does not decode is reported first): what the visitor was given is then to be thrown away.
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` naming the byte offset when any check fails, or an I/O error.
    package func visitEntityChunk<Visitor: CheckpointChunkVisitor>(
        _ entry: EntityChunkEntry, entityIndex: UInt32, checkpointTransactionID: UInt64, visitor: consuming Visitor
    ) throws(LogFormatError) -> Visitor {
        let offset = entry.byteOffset
        var checked = EntityChunkCheck(inner: visitor, entry: entry, entityIndex: entityIndex)
        try readCheckpointFrame(
            at: offset, type: .checkpointEntityChunk, what: "checkpoint chunk",
            checkpointTransactionID: checkpointTransactionID
        ) { (payload) throws(LogFormatError) in try CheckpointChunk.visit(payload, &checked) }
        if let problem = checked.countProblem ?? checked.recordProblem {
            throw damagedChunk("checkpoint chunk", at: offset, problem)
        }
        return checked.inner
    }

    /// Reads and verifies one entity chunk by its directory entry as ``visitEntityChunk(_:entityIndex:checkpointTransactionID:visitor:)``
    /// does (the frame's checksum, type and checkpoint), and returns the table of foreign stores its payload begins
    /// with, without decoding its records: the checks of the records against the directory are left to the chunk's
    /// first full decoding. Safe to call from any thread (`pread`).
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` naming the byte offset when the frame does not verify or the table
    ///   does not decode, or an I/O error.
    package func readEntityChunkForeignStores(_ entry: EntityChunkEntry, checkpointTransactionID: UInt64)
        throws(LogFormatError) -> [LogUUID]
    {
        try readCheckpointFrame(
            at: entry.byteOffset, type: .checkpointEntityChunk, what: "checkpoint chunk",
            checkpointTransactionID: checkpointTransactionID, decode: CheckpointChunk.foreignStores(ofPayload:))
    }

    /// Reads, verifies and decodes one checkpoint index chunk by its directory entry (format 1.4). Safe to call from
    /// any thread (`pread`).
    ///
    /// Checked against the directory: the frame verifies and is an index chunk of this checkpoint; it holds exactly
    /// `entry.entryCount` entries of `arity` values; its first and last entries carry the directory's bounds. The
    /// order of the entries is the object layer's to check (LogFormat does not order values).
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` naming the byte offset when any check fails, or an I/O error.
    package func readIndexChunk(_ entry: IndexChunkEntry, arity: Int, checkpointTransactionID: UInt64)
        throws(LogFormatError) -> CheckpointIndexChunk
    {
        let offset = entry.byteOffset
        let damaged = { (reason: String) in self.damagedChunk("checkpoint index chunk", at: offset, reason) }
        let chunk = try readCheckpointFrame(
            at: offset, type: .checkpointIndexChunk, what: "checkpoint index chunk",
            checkpointTransactionID: checkpointTransactionID, decode: CheckpointIndexChunk.init(decoding:))
        guard chunk.arity == arity, chunk.entryCount == Int(entry.entryCount) else {
            throw damaged(
                "holds \(chunk.entryCount) entries of arity \(chunk.arity); the directory says "
                    + "\(entry.entryCount) of arity \(arity)")
        }
        // At least one entry (the decoder refuses none).
        guard chunk.values(ofEntry: 0).elementsEqual(entry.firstValues),
            chunk.values(ofEntry: chunk.entryCount - 1).elementsEqual(entry.lastValues)
        else {
            throw damaged("does not begin and end with the values its directory entry lists")
        }
        return chunk
    }

    /// Reads the frame at `offset`, checks that it is a `type` frame of the checkpoint at `checkpointTransactionID`
    /// and decodes its payload; anything else is damage at that offset.
    private func readCheckpointFrame<Payload>(
        at offset: UInt64, type: FrameType, what: String, checkpointTransactionID: UInt64,
        decode: ([UInt8]) throws(LogFormatError) -> Payload
    ) throws(LogFormatError) -> Payload {
        let (_, payload) = try checkedCheckpointFrame(
            at: offset, type: type, what: what, checkpointTransactionID: checkpointTransactionID
        ) { () throws(LogFormatError) in try readFrame(at: offset) }
        do throws(LogFormatError) {
            return try decode(payload)
        } catch {
            throw damagedChunk(what, at: offset, "does not decode: \(error.message)")
        }
    }

    /// Reads the frame at `offset` as stored, without decompressing or decoding it: its header, body checksum and
    /// padding verify, and it is a `type` frame of the checkpoint at `checkpointTransactionID`; anything else is
    /// damage at that offset. What a rewrite copies into a new checkpoint (``StoredCheckpointFrame``).
    func storedCheckpointFrame(
        at offset: UInt64, type: FrameType, what: String, checkpointTransactionID: UInt64
    ) throws(LogFormatError) -> StoredCheckpointFrame {
        let (frameHeader, body) = try checkedCheckpointFrame(
            at: offset, type: type, what: what, checkpointTransactionID: checkpointTransactionID
        ) { () throws(LogFormatError) in try readStoredFrame(at: offset) }
        return StoredCheckpointFrame(
            type: type, codec: frameHeader.codec, rawByteCount: frameHeader.rawByteCount, body: body)
    }

    /// What `read` gives for the frame at `offset` (its header and bytes) once the header says it is a `type` frame
    /// of the checkpoint at `checkpointTransactionID`; a frame that cannot be read as one (an offset or codec no such
    /// chunk can have: the directory points at something else) or of another type or checkpoint is damage at that
    /// offset.
    private func checkedCheckpointFrame(
        at offset: UInt64, type: FrameType, what: String, checkpointTransactionID: UInt64,
        read: () throws(LogFormatError) -> (FrameHeader, [UInt8])
    ) throws(LogFormatError) -> (FrameHeader, [UInt8]) {
        let (frameHeader, bytes): (FrameHeader, [UInt8])
        do throws(LogFormatError) {
            (frameHeader, bytes) = try read()
        } catch  where error.code == .invalidArgument {
            throw damagedChunk(what, at: offset, "cannot be read: \(error.message)")
        }
        guard frameHeader.type == type, frameHeader.transactionID == checkpointTransactionID else {
            throw damagedChunk(
                what, at: offset,
                "is a \(frameHeader.type) frame of transaction \(frameHeader.transactionID), not a \(type) frame of "
                    + "the checkpoint at transaction \(checkpointTransactionID)")
        }
        return (frameHeader, bytes)
    }

    func damagedChunk(_ what: String, at offset: UInt64, _ reason: String) -> LogFormatError {
        LogFormatError(.damaged, "the \(what) at byte offset \(offset) \(reason)", path: path, byteOffset: offset)
    }
}

/// Checks an entity chunk's records against its directory entry as they are decoded, passing them on: exactly
/// `entry.objectCount` records, every one of entity `entityIndex` in this store, with keys in `entry.minKey ...
/// entry.maxKey`. The first problem of each kind is kept, to be thrown once the payload has decoded.
private struct EntityChunkCheck<Inner: CheckpointChunkVisitor>: CheckpointChunkVisitor {
    var inner: Inner
    let entry: EntityChunkEntry
    let entityIndex: UInt32
    var countProblem: String?
    var recordProblem: String?

    mutating func visitForeignStores(_ stores: [LogUUID]) { inner.visitForeignStores(stores) }

    mutating func visitRecordCount(_ count: Int) {
        if count != Int(entry.objectCount) {
            countProblem = "holds \(count) objects; the directory says \(entry.objectCount)"
        }
        inner.visitRecordCount(count)
    }

    mutating func visitRecord(_ object: ObjectReference) {
        if recordProblem == nil,
            object.storeIndex != 0 || object.entityIndex != entityIndex || object.key < entry.minKey
                || object.key > entry.maxKey
        {
            recordProblem =
                "holds object \(object.key) of entity #\(object.entityIndex) (store \(object.storeIndex)); the "
                + "directory lists keys \(entry.minKey) to \(entry.maxKey) of entity #\(entityIndex)"
        }
        inner.visitRecord(object)
    }

    mutating func visitProperty(_ propertyIndex: UInt32, _ value: BorrowedPropertyValue) {
        inner.visitProperty(propertyIndex, value)
    }

    mutating func endRecord() { inner.endRecord() }
}
