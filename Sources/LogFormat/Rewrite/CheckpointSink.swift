/// Receives the frames of a checkpoint while a log is rewritten.
package struct CheckpointSink: ~Copyable {
    var writer: SequentialFrameWriter
    /// The checkpoint's last transaction, which the fragments of a large chunk carry (like its begin and end).
    let transactionID: UInt64
    /// The size of each fragment of a chunk that does not fit one frame (the writer's fragment size).
    let fragmentByteCount: Int
    /// A chunk's payload up to this many bytes is one frame; a larger one is split into fragments. Only tests
    /// lower it: a chunk that fits one frame stays one frame, so that readers of format 1.1 read such checkpoints.
    var wholeChunkByteLimit = LogLimits.maxFrameRawByteCount {
        didSet { precondition(wholeChunkByteLimit >= 1, "a chunk frame holds at least one byte") }
    }
    /// Stops the rewrite at the next frame appended (see ``RewriteCancellation``).
    var cancellation: RewriteCancellation?
    /// Where each blob appended so far landed.
    package private(set) var locations: [BlobLocation] = []
    /// The entity chunks appended so far (format 1.3): the directory the rewrite writes before the end.
    package private(set) var directory = CheckpointDirectory(entities: [])
    /// The arrays of chunks' payloads and compressed bodies, handed back once compressed or written and taken
    /// again for the next chunks: as many as the pipeline holds at once, so the checkpoint's chunks reuse a few
    /// arrays instead of taking fresh memory per chunk.
    package let arrays = ByteArrayPool(limit: OrderedPipeline.window + 2 * OrderedPipeline.workerCount)

    init(writer: consuming SequentialFrameWriter, transactionID: UInt64, fragmentByteCount: Int) {
        self.writer = writer
        self.transactionID = transactionID
        self.fragmentByteCount = max(1, min(fragmentByteCount, LogLimits.maxFrameRawByteCount))
    }

    /// Appends a batch of live objects: one checkpoint-chunk frame, or — when its payload is larger than a frame —
    /// checkpoint-chunk-first/-middle/-last fragments, so that a checkpoint holds any object a transaction can.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when the encoded chunk is larger than the file's transaction
    ///   limit (``LogFileHeader/transactionByteLimit``), which bounds a chunk as it bounds a transaction.
    package mutating func append(_ chunk: CheckpointChunk) throws(LogFormatError) {
        try checkCancellation()
        let payload = try encode { try chunk.encoded() }
        let limit = writer.header.transactionByteLimit
        guard payload.count <= limit else {
            throw LogFormatError(
                .limitExceeded,
                "the encoded checkpoint chunk is \(payload.count) bytes, more than the log's limit of \(limit) bytes "
                    + "for a transaction or a checkpoint chunk",
                path: writer.file.path)
        }
        guard payload.count > wholeChunkByteLimit else {
            try writer.append(OutgoingFrame(type: .checkpointChunk, payload: payload))
            return
        }
        // Fragments no larger than a whole chunk may be, so that there are at least two (a first and a last).
        let fragment = min(fragmentByteCount, wholeChunkByteLimit)
        let count = (payload.count + fragment - 1) / fragment
        for index in 0..<count {
            let start = index * fragment
            let end = min(start + fragment, payload.count)
            try writer.append(
                OutgoingFrame(
                    type: FragmentKind.checkpointChunk.type(ofFragment: index, count: count),
                    transactionID: transactionID, partIndex: UInt32(index), payload: Array(payload[start..<end])))
        }
    }

    /// Appends a chunk of one entity's live objects as one checkpoint-entity-chunk frame (format 1.3) and lists it
    /// in the checkpoint's directory, which the rewrite writes before the checkpoint-end. The caller appends an
    /// entity's chunks in slot order, entity after entity (`Docs/FileFormat-Checkpoints.md` §3).
    ///
    /// - Precondition: 1 ... ``LogLimits/maxEntityChunkObjectCount`` records, all of one entity of this store, and
    ///   that entity not before the last one appended.
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when the encoded chunk does not fit one frame (nothing is
    ///   written; write that entity's objects with ``append(_:)`` instead).
    package mutating func appendEntityChunk(_ chunk: CheckpointChunk) throws(LogFormatError) {
        let payload = try EntityChunkPayload(chunk)
        try appendEntityChunk(
            ListedEntityChunk(payload),
            encoded: Self.encodeEntityChunk(payload.bytes, seed: writer.seed, transactionID: transactionID))
    }

    /// Appends chunks as ``appendEntityChunk(_:)`` does, one after the other in the given order, while their
    /// payloads are encoded, compressed and checksummed on every core, a few ahead of the writer (so at most
    /// ``OrderedPipeline/window`` encoded chunks are held besides the chunks themselves). The file is the same as
    /// with one call per chunk.
    package mutating func appendEntityChunks(_ chunks: [CheckpointChunk]) throws(LogFormatError) {
        try appendEntityChunks(count: chunks.count) { (index, _) throws(LogFormatError) in
            .encoded(try EntityChunkPayload(chunks[index]))
        }
    }

    /// Appends `count` entity chunks in order, chunk `i` being what `content(i, arrays)` gives: a payload (its bytes
    /// best taken from `arrays`, to which they go back once compressed), which is compressed and checksummed here, or a chunk of the old checkpoint as stored (``StoredEntityChunk``), whose
    /// body is only checksummed again with the new file's seed. The contents are made on every core a few ahead of
    /// the chunk being written (``OrderedPipeline``: at most its window is held, so a writer that encodes from its
    /// own layout never holds the whole checkpoint, and the cores wait neither for the file's writes nor for one
    /// another). The file is the same as with one ``appendEntityChunk(_:)`` per chunk of the same payloads.
    ///
    /// - Precondition: each chunk as ``appendEntityChunk(_:)`` requires of a chunk.
    /// - Throws: what `content` throws; ``LogFormatError/Code/limitExceeded`` when a payload does not fit one frame.
    package mutating func appendEntityChunks(
        count: Int,
        content:
            @escaping @Sendable (_ index: Int, _ arrays: ByteArrayPool) throws(LogFormatError) -> EntityChunkContent
    ) throws(LogFormatError) {
        let (seed, transactionID, arrays) = (writer.seed, transactionID, arrays)
        try appendMade(count: count) { (index) throws(LogFormatError) in
            try Self.make(content, index, seed: seed, transactionID: transactionID, arrays: arrays)
        } append: { (sink, made) throws(LogFormatError) in
            try sink.appendEntityChunk(made.chunk, encoded: made.body)
            arrays.recycle(made.body.body.body)
        }
    }

    /// Makes `count` things with `make` on every core, a few ahead of the writer (``OrderedPipeline``), while they
    /// are appended in order with `append` on this thread (so at most ``OrderedPipeline/window`` made things are
    /// held, and the cores wait neither for the file's writes nor for one another). The first failure, of a making
    /// or of an appending, is thrown in order; a cancellation stops the making and is thrown before the next append.
    mutating func appendMade<Made: Sendable>(
        count: Int, make: @escaping @Sendable (_ index: Int) throws(LogFormatError) -> Made,
        append: (inout CheckpointSink, Made) throws(LogFormatError) -> Void
    ) throws(LogFormatError) {
        let (cancellation, path) = (cancellation, writer.file.path)
        let stopReason: @Sendable () -> LogFormatError? = {
            do throws(LogFormatError) {
                try cancellation?.check(path: path, stage: Self.cancelledStage)
            } catch { return error }
            return nil
        }
        try OrderedPipeline.run(count: count, stopReason: stopReason, make: make) { (_, made) throws(LogFormatError) in
            try append(&self, made)
        }
    }

    /// Makes the frame body of one entity chunk (on any thread).
    private static func make(
        _ content: @Sendable (_ index: Int, _ arrays: ByteArrayPool) throws(LogFormatError) -> EntityChunkContent,
        _ index: Int, seed: UInt32, transactionID: UInt64, arrays: ByteArrayPool
    ) throws(LogFormatError) -> (chunk: ListedEntityChunk, body: EncodedEntityChunk) {
        switch try content(index, arrays) {
        case .encoded(let chunk):
            // The payload's bytes go into the frame's body here, and their array back to the pool.
            let body = try encodeEntityChunk(chunk.bytes, seed: seed, transactionID: transactionID, arrays: arrays)
            arrays.recycle(chunk.bytes)
            return (ListedEntityChunk(chunk), body)
        case .stored(let chunk):
            let body = EncodedEntityChunk(
                payloadByteCount: Int(chunk.rawByteCount),
                body: chunk.encodedBody(seed: seed, transactionID: transactionID))
            return (ListedEntityChunk(chunk), body)
        }
    }

    /// What the directory lists about an entity chunk besides its offset.
    struct ListedEntityChunk: Sendable {
        var entityIndex: UInt32
        var objectCount: Int
        var minKey: UInt64
        var maxKey: UInt64

        init(_ payload: EntityChunkPayload) {
            (entityIndex, objectCount) = (payload.entityIndex, payload.objectCount)
            (minKey, maxKey) = (payload.minKey, payload.maxKey)
        }

        init(_ stored: StoredEntityChunk) {
            (entityIndex, objectCount) = (stored.entityIndex, Int(stored.entry.objectCount))
            (minKey, maxKey) = (stored.entry.minKey, stored.entry.maxKey)
        }
    }

    /// A chunk's payload, compressed and checksummed for the new file, before it is placed in the file.
    struct EncodedEntityChunk: Sendable {
        var payloadByteCount: Int
        var body: EncodedBody
    }

    /// Encodes an entity chunk's frame body (no dictionary: a chunk is read on its own), compressed into an array
    /// of `arrays` when given.
    static func encodeEntityChunk(
        _ payload: [UInt8], seed: UInt32, transactionID: UInt64, arrays: ByteArrayPool? = nil
    ) throws(LogFormatError) -> EncodedEntityChunk {
        // A payload over a frame is refused by the caller before this body is used.
        guard payload.count <= LogLimits.maxFrameRawByteCount else {
            return EncodedEntityChunk(
                payloadByteCount: payload.count,
                body: EncodedBody(
                    type: .checkpointEntityChunk, codec: .raw, transactionID: 0, partIndex: 0, rawByteCount: 0,
                    body: [], bodyChecksum: 0))
        }
        let frame = OutgoingFrame(type: .checkpointEntityChunk, transactionID: transactionID, payload: payload)
        let body = try frame.encodeBody(seed: seed, dictionary: nil, arrays: arrays)
        return EncodedEntityChunk(payloadByteCount: payload.count, body: body)
    }

    private mutating func appendEntityChunk(_ chunk: ListedEntityChunk, encoded: EncodedEntityChunk)
        throws(LogFormatError)
    {
        precondition(
            chunk.objectCount >= 1 && chunk.objectCount <= LogLimits.maxEntityChunkObjectCount,
            "an entity chunk holds 1 to \(LogLimits.maxEntityChunkObjectCount) objects, not \(chunk.objectCount)")
        let entityIndex = chunk.entityIndex
        precondition(
            directory.entities.last.map { $0.entityIndex <= entityIndex } ?? true,
            "entity chunks are appended entity after entity")
        // One frame, and no more than the file's limit for a transaction or a chunk (FileFormat.md §3.5).
        let limit = min(LogLimits.maxFrameRawByteCount, writer.header.transactionByteLimit)
        guard encoded.payloadByteCount <= limit else {
            throw LogFormatError(
                .limitExceeded,
                "the encoded entity chunk is \(encoded.payloadByteCount) bytes, more than the log's limit of \(limit) "
                    + "bytes for a checkpoint chunk in one frame",
                path: writer.file.path)
        }
        let offset = try writer.append(encoded: encoded.body)
        let entry = EntityChunkEntry(
            byteOffset: offset, objectCount: UInt32(chunk.objectCount), minKey: chunk.minKey, maxKey: chunk.maxKey)
        if directory.entities.last?.entityIndex == entityIndex {
            directory.entities[directory.entities.count - 1].chunks.append(entry)
        } else {
            directory.entities.append(EntityChunks(entityIndex: entityIndex, chunks: [entry]))
        }
    }

    mutating func appendIndexChunk(_ chunk: EncodedIndexChunk, of index: IndexChunks) throws(LogFormatError) {
        let limit = min(LogLimits.maxFrameRawByteCount, writer.header.transactionByteLimit)
        guard chunk.payloadByteCount <= limit, let body = chunk.body else {
            throw LogFormatError(
                .limitExceeded,
                "the encoded index chunk is \(chunk.payloadByteCount) bytes, more than the limit of \(limit) bytes "
                    + "for one frame",
                path: writer.file.path)
        }
        let offset = try writer.append(encoded: body)
        let entry = IndexChunkEntry(
            byteOffset: offset, entryCount: UInt32(chunk.entryCount), firstValues: chunk.firstValues,
            lastValues: chunk.lastValues)
        if let last = directory.indexes.last, !CheckpointDirectory.precedes(last, index) {
            precondition(
                last.kind == index.kind && last.entityIndex == index.entityIndex
                    && last.ownerEntityIndex == index.ownerEntityIndex && last.ordinal == index.ordinal,
                "indexes are appended in the directory's order")
            directory.indexes[directory.indexes.count - 1].chunks.append(entry)
        } else {
            var listed = index
            listed.chunks = [entry]
            directory.indexes.append(listed)
        }
    }

    func checkCancellation() throws(LogFormatError) {
        try cancellation?.check(path: writer.file.path, stage: Self.cancelledStage)
    }

    /// Where a cancelled rewrite says it stopped when it stopped among the checkpoint's frames.
    private static let cancelledStage = "while its checkpoint was written"

    /// Appends the checkpoint's directory when it has entity chunks (the rewrite calls it before the end).
    mutating func finishDirectory() throws(LogFormatError) {
        guard !directory.entities.isEmpty else { return }
        let payload = try encode { try directory.encoded() }
        try writer.append(OutgoingFrame(type: .checkpointDirectory, transactionID: transactionID, payload: payload))
    }

    /// Appends the bytes of an externally stored value that live objects reference; returns where it landed.
    @discardableResult
    package mutating func appendBlob(_ reference: BlobReference, bytes: [UInt8]) throws(LogFormatError) -> BlobLocation
    {
        try checkCancellation()
        let offset = try writer.append(
            OutgoingFrame(
                type: .blob, transactionID: reference.transactionID, partIndex: reference.index, payload: bytes))
        let location = BlobLocation(
            transactionID: reference.transactionID, index: reference.index, byteOffset: offset,
            byteCount: UInt32(bytes.count))
        locations.append(location)
        return location
    }
}
