/// The grammar of the chunk layout's frames (format 1.3, `Docs/FileFormat-Checkpoints.md` §3): entity chunks,
/// then the directory that lists them, then the checkpoint-end.
extension LogScanner {
    /// A checkpoint-entity-chunk or checkpoint-directory frame. An entity chunk is delivered as an ordinary chunk
    /// when its body was verified (tools read it like any other), and not at all when the scan defers entity
    /// chunks (the store's open: the directory says where it is, and it is read on first touch). The directory
    /// must list exactly the entity chunks this checkpoint holds, in file order.
    func applyEntityChunkLayout(
        _ frame: VerifiedFrame, _ pending: inout Pending, _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let h = frame.header
        guard case .checkpoint(let start, let lastID, nil, var layout) = pending else {
            return "\(h.type) frame outside a checkpoint"
        }
        guard h.transactionID == lastID else {
            return "\(h.type) frame names transaction \(h.transactionID), not the checkpoint's \(lastID)"
        }
        // A chunk is read on its own, by its offset, so it cannot depend on a dictionary found by scanning.
        guard h.partIndex == 0, h.codec != .lz4Dictionary else {
            return "\(h.type) frame with part index \(h.partIndex) and codec \(h.codec.rawValue)"
        }
        guard !layout.hasDirectory else { return "\(h.type) frame after the checkpoint directory" }
        if h.type == .checkpointIndexChunk {
            // Index chunks (format 1.4) follow the entity chunks; their bodies are verified by a scan that does not
            // defer (tools) and read on first use otherwise. They deliver nothing: the directory lists them.
            guard !layout.byteOffsets.isEmpty else { return "an index chunk before any entity chunk" }
            layout.indexByteOffsets.append(frame.byteOffset)
            pending = .checkpoint(byteOffset: start, lastTransactionID: lastID, chunk: nil, layout: layout)
            return nil
        }
        if h.type == .checkpointEntityChunk {
            guard layout.indexByteOffsets.isEmpty else { return "an entity chunk after an index chunk" }
            // Bounded like any checkpoint chunk by the file's limit (one frame is at most 16 MiB already).
            guard Int(h.rawByteCount) <= header.transactionByteLimit else {
                return "an entity chunk of \(h.rawByteCount) bytes, more than the file's limit of "
                    + "\(header.transactionByteLimit)"
            }
            layout.byteOffsets.append(frame.byteOffset)
            pending = .checkpoint(byteOffset: start, lastTransactionID: lastID, chunk: nil, layout: layout)
            if !defersEntityChunkBodies {
                try deliver(.checkpointChunk(payload: .whole(frame.payload), byteOffset: frame.byteOffset))
            }
            return nil
        }
        guard !layout.byteOffsets.isEmpty else { return "a checkpoint directory in a checkpoint without entity chunks" }
        let directory: CheckpointDirectory
        do throws(LogFormatError) {
            directory = try CheckpointDirectory(decoding: frame.payload)
        } catch {
            // The frame verified, so a directory that does not decode was written that way: it breaks the grammar
            // like a frame in the wrong place, rather than stopping the scan as an error of the payload.
            return "the checkpoint directory does not decode: \(error.message)"
        }
        let listed = directory.allChunks.map(\.byteOffset)
        guard listed == layout.byteOffsets else {
            return "the checkpoint directory lists \(listed.count) chunk(s), not the \(layout.byteOffsets.count) "
                + "entity chunk(s) of its checkpoint at their offsets"
        }
        let listedIndexChunks = directory.allIndexChunkOffsets
        guard listedIndexChunks == layout.indexByteOffsets else {
            return "the checkpoint directory lists \(listedIndexChunks.count) index chunk(s), not the "
                + "\(layout.indexByteOffsets.count) index chunk(s) of its checkpoint at their offsets"
        }
        layout.hasDirectory = true
        pending = .checkpoint(byteOffset: start, lastTransactionID: lastID, chunk: nil, layout: layout)
        try deliver(.checkpointDirectory(directory, byteOffset: frame.byteOffset))
        return nil
    }
}
