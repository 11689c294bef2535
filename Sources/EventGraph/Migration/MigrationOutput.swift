import LogFormat

/// The new log a migration writes, and a running digest of every unit the migration hands it, in order: the
/// schema, each transaction's blobs and changeset, checkpoints, the seal.
///
/// The digest is how the finished file is verified without replaying it into a second graph: a scan of the file
/// (``LogReader/scanUnits(_:)``, which checks every frame's checksums and decompresses it) must deliver the same
/// units. What the migration reports (counts, and the state it built when it needed one) comes from the same mapped
/// records it encoded here, so a file that holds exactly these units replays to it.
///
/// A class, so the scan's closure and the run share one writer (a ``ReplacementLog`` cannot be copied).
final class MigrationOutput {
    private var log: ReplacementLog
    /// The temporary file being written.
    let path: String
    private var digest = DigestHasher()
    /// Test seam: what the writer is handed instead of a transaction's payload, after the digest has taken the
    /// payload — a stand-in for an encoder or writer that does not store what the mapping produced.
    private let replacePayload: (@Sendable (_ transactionID: UInt64, _ payload: [UInt8]) -> [UInt8])?

    init(
        _ log: consuming ReplacementLog,
        replacingPayloads replacePayload: (@Sendable (UInt64, [UInt8]) -> [UInt8])? = nil
    ) {
        path = log.path
        self.log = log
        self.replacePayload = replacePayload
    }

    func append(schema: SchemaPayload) throws {
        digest.combine(LogUnit(.schema, payload: try log.append(schema: schema)))
    }

    /// Appends a transaction under the ID the old log gave it.
    func appendTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]]) throws {
        for (index, blob) in blobs.enumerated() {
            digest.combine(
                LogUnit(blob: .transactionBlob, transactionID: id, index: UInt32(index), byteCount: blob.count))
        }
        digest.combine(LogUnit(.transaction, transactionID: id, payload: payload))
        try log.appendTransaction(id: id, payload: replacePayload?(id, payload) ?? payload, blobs: blobs)
    }

    func beginCheckpoint(_ begin: CheckpointBegin) throws {
        digest.combine(LogUnit(.checkpointBegin, payload: try log.beginCheckpoint(begin)))
    }

    /// Appends a chunk of a checkpoint; returns its payload's length.
    @discardableResult
    func appendCheckpointChunk(_ chunk: CheckpointChunk) throws -> Int {
        let payload = try log.appendCheckpointChunk(chunk)
        digest.combine(LogUnit(.checkpointChunk, payload: payload))
        return payload.count
    }

    func appendCheckpointBlob(_ reference: BlobReference, bytes: [UInt8]) throws {
        digest.combine(
            LogUnit(
                blob: .checkpointBlob, transactionID: reference.transactionID, index: reference.index,
                byteCount: bytes.count))
        try log.appendCheckpointBlob(reference, bytes: bytes)
    }

    func endCheckpoint(_ end: CheckpointEnd, lastTransactionID: UInt64) throws {
        digest.combine(
            LogUnit(.checkpointEnd, payload: try log.endCheckpoint(end, lastTransactionID: lastTransactionID)))
    }

    /// Seals and syncs the file.
    func finish() throws {
        try log.finish()
        digest.combine(LogUnit(.seal, payload: []))
    }

    /// Removes the temporary file.
    func discard() { log.discard() }

    /// Reads the finished file back once: every frame must verify, the file must end with its seal, and its units
    /// must be the ones handed to it, in order.
    ///
    /// - Throws: ``EventGraphError`` (`log`) naming the store at `storePath` when the file differs.
    func verify(storePath: String) throws {
        var check = DigestHasher()
        let scan = try LogReader(path: path).scanUnits { check.combine($0) }
        guard scan.tail == .clean, scan.endsWithSeal, check.state == digest.state else {
            throw EventGraphError(
                .log,
                "\(storePath): the migrated log does not verify (content digest \(String(check.state, radix: 16)) "
                    + "instead of \(String(digest.state, radix: 16)), tail \(scan.tail), "
                    + "\(scan.endsWithSeal ? "sealed" : "not sealed")); the store was not changed")
        }
    }
}

extension DigestHasher {
    /// Adds one unit of a log: its kind, identity, length and payload.
    mutating func combine(_ unit: LogUnit) {
        combine(byte: unit.kind.rawValue)
        combine(integer: unit.transactionID)
        combine(integer: UInt64(unit.index))
        combine(integer: UInt64(unit.byteCount))
        combine(bytes: unit.payload)
    }
}
