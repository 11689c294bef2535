/// Turns a scan's events into records (``LogReader/record(for:path:fromTransactionID:)``) for a scan that delivers
/// checkpoint entity chunks (a tool's; a store's open defers them), naming the entity of one whose payload does not
/// decode.
///
/// An entity chunk (format 1.3) does not say which entity's chunk it is: the checkpoint's directory does, and it
/// comes after the chunks (`Docs/FileFormat-Checkpoints.md` §3). So the error of a chunk that does not decode is
/// kept, nothing more of the checkpoint is delivered, and the error is thrown when the directory arrives, naming the
/// chunk's number and entity as the directory lists it (by the name the latest schema frame gives the entity) and
/// keeping the chunk's byte offset; any other event first (a checkpoint of ordinary chunks has no directory), or the
/// end of the scan (``finish()``), throws it as it was.
struct ScanRecordConverter {
    let path: String
    let fromTransactionID: UInt64
    /// The entities' names by index, from the latest schema frame.
    private var entityNames: [String] = []
    /// The error of a checkpoint chunk that did not decode, and its byte offset, until the directory names it.
    private var undecodedChunk: (error: LogFormatError, byteOffset: UInt64)?

    init(path: String, fromTransactionID: UInt64) {
        self.path = path
        self.fromTransactionID = fromTransactionID
    }

    /// The record of `event`, or `nil` when it delivers none.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` for a payload that does not decode (a checkpoint chunk's
    ///   when the directory or another event comes after it).
    mutating func record(for event: ScanEvent) throws(LogFormatError) -> LogRecord? {
        if let undecoded = undecodedChunk {
            switch event {
            case .checkpointChunk: return nil  // the checkpoint is refused; its directory may still name the chunk
            case .checkpointDirectory(let directory, _): throw naming(undecoded, by: directory)
            default: throw undecoded.error
            }
        }
        do {
            let record = try LogReader.record(for: event, path: path, fromTransactionID: fromTransactionID)
            if case .schema(let schema, _)? = record { entityNames = schema.entities.map(\.name) }
            return record
        } catch {
            guard case .checkpointChunk(_, let byteOffset) = event, error.code == .malformedPayload else { throw error }
            undecodedChunk = (error, byteOffset)
            return nil
        }
    }

    /// Throws the error of a checkpoint chunk that did not decode and that no directory named; call it when the scan
    /// has ended (before acting on its report).
    func finish() throws(LogFormatError) {
        if let undecoded = undecodedChunk { throw undecoded.error }
    }

    /// The error of an undecoded chunk, naming its number and entity when `directory` lists it.
    private func naming(_ undecoded: (error: LogFormatError, byteOffset: UInt64), by directory: CheckpointDirectory)
        -> LogFormatError
    {
        for entity in directory.entities {
            guard let chunkIndex = entity.chunks.firstIndex(where: { $0.byteOffset == undecoded.byteOffset }) else {
                continue
            }
            let index = Int(entity.entityIndex)
            let name = index < entityNames.count ? entityNames[index] : "#\(index)"
            var error = undecoded.error
            let prefix = "checkpoint chunk: "
            let reason = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
            error.message =
                "checkpoint chunk \(chunkIndex) of entity \(name) (byte offset \(undecoded.byteOffset)) does not "
                + "decode: \(reason)"
            return error
        }
        return undecoded.error
    }
}
