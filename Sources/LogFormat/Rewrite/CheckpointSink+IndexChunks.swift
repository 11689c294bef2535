extension CheckpointSink {
    /// Appends one chunk of a stored index (format 1.4) and lists it in the directory under `index` (whose chunks
    /// the caller leaves empty: the entries are filled here). The caller appends every entity chunk first, then the
    /// indexes in the directory's order (entity, kind, owner, ordinal), each index's chunks in its order.
    ///
    /// - Precondition: the chunk's entries are of the index's arity, in the index's order (the object layer's).
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when the chunk does not fit one frame.
    package mutating func appendIndexChunk(_ chunk: CheckpointIndexChunk, of index: IndexChunks)
        throws(LogFormatError)
    {
        precondition(!directory.entities.isEmpty, "index chunks follow the entity chunks they index")
        try checkCancellation()
        try appendIndexChunk(
            Self.encodeIndexChunk(chunk, of: index, seed: writer.seed, transactionID: transactionID), of: index)
    }

    /// Appends stored indexes' chunks as ``appendIndexChunk(_:of:)`` does, index after index in the given order and
    /// each index's chunks in its order, while their payloads are encoded, compressed and checksummed on every core
    /// a few ahead of the writer (as ``appendEntityChunks(count:content:)`` makes entity chunks). The file is the
    /// same as with one ``appendIndexChunk(_:of:)`` per chunk.
    ///
    /// - Precondition: as ``appendIndexChunk(_:of:)`` requires of each chunk and of the order of the indexes.
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when a chunk does not fit one frame.
    package mutating func appendIndexChunks(_ indexes: [(index: IndexChunks, chunks: [CheckpointIndexChunk])])
        throws(LogFormatError)
    {
        try appendIndexChunks(of: indexes.map(\.index), chunkCounts: indexes.map(\.chunks.count)) { index, chunk in
            indexes[index].chunks[chunk]
        }
    }

    /// Appends stored indexes' chunks as ``appendIndexChunks(_:)`` does, chunk `c` of index `i` being what
    /// `chunk(i, c)` gives: called on the worker that encodes it, which lets it go once encoded (a writer that
    /// holds its indexes' entries flat makes each chunk's copy only then).
    ///
    /// - Precondition: as ``appendIndexChunk(_:of:)`` requires of each chunk and of the order of the indexes;
    ///   `chunkCounts` has one count per index.
    package mutating func appendIndexChunks(
        of indexes: [IndexChunks], chunkCounts: [Int],
        chunk: @escaping @Sendable (_ index: Int, _ chunk: Int) -> CheckpointIndexChunk
    ) throws(LogFormatError) {
        try appendIndexChunks(of: indexes, chunkCounts: chunkCounts) { index, position in
            .built(chunk(index, position))
        }
    }

    /// Appends stored indexes' chunks as ``appendIndexChunks(of:chunkCounts:chunk:)`` does, chunk `c` of index `i`
    /// being what `content(i, c)` gives: entries, encoded, compressed and checksummed here, or a chunk of the old
    /// checkpoint as stored (``StoredIndexChunk``), whose body is only checksummed again with the new file's seed and
    /// which the directory lists with its old entry count and bounds.
    ///
    /// - Precondition: as ``appendIndexChunks(of:chunkCounts:chunk:)``; a stored chunk's arity is its index's.
    package mutating func appendIndexChunks(
        of indexes: [IndexChunks], chunkCounts: [Int],
        content: @escaping @Sendable (_ index: Int, _ chunk: Int) -> IndexChunkContent
    ) throws(LogFormatError) {
        precondition(chunkCounts.count == indexes.count, "one chunk count per index")
        // Each chunk's place: its index's position in `indexes`, its position in that index's chunks.
        var places: [(index: Int, chunk: Int)] = []
        for (position, count) in chunkCounts.enumerated() {
            places.append(contentsOf: (0..<count).map { (position, $0) })
        }
        guard !places.isEmpty else { return }
        precondition(!directory.entities.isEmpty, "index chunks follow the entity chunks they index")
        let (seed, transactionID, arrays) = (writer.seed, transactionID, arrays)
        try appendMade(count: places.count) { [places] (position) throws(LogFormatError) in
            let (index, chunkIndex) = places[position]
            switch content(index, chunkIndex) {
            case .built(let chunk):
                return (
                    index,
                    try Self.encodeIndexChunk(
                        chunk, of: indexes[index], seed: seed, transactionID: transactionID, arrays: arrays)
                )
            case .stored(let stored):
                precondition(
                    stored.entry.firstValues.count == Int(indexes[index].arity)
                        && stored.entry.lastValues.count == Int(indexes[index].arity),
                    "a stored index chunk of another arity than its index's")
                return (
                    index,
                    EncodedIndexChunk(
                        payloadByteCount: Int(stored.frame.rawByteCount),
                        body: stored.frame.encodedBody(seed: seed, transactionID: transactionID),
                        entryCount: Int(stored.entry.entryCount), firstValues: stored.entry.firstValues,
                        lastValues: stored.entry.lastValues)
                )
            }
        } append: { (sink, made) throws(LogFormatError) in
            try sink.appendIndexChunk(made.1, of: indexes[made.0])
            if let body = made.1.body { arrays.recycle(body.body) }
        }
    }

    /// An index chunk's payload, compressed and checksummed for the new file, with what the directory lists of it.
    struct EncodedIndexChunk: Sendable {
        var payloadByteCount: Int
        /// The frame's body; nil when the payload does not fit one frame (refused when it is appended).
        var body: EncodedBody?
        var entryCount: Int
        var firstValues: [AttributeValue]
        var lastValues: [AttributeValue]
    }

    /// Encodes an index chunk's frame body (on any thread), compressed into an array of `arrays` when given.
    private static func encodeIndexChunk(
        _ chunk: CheckpointIndexChunk, of index: IndexChunks, seed: UInt32, transactionID: UInt64,
        arrays: ByteArrayPool? = nil
    ) throws(LogFormatError) -> EncodedIndexChunk {
        precondition(
            chunk.arity == Int(index.arity), "an index chunk of arity \(chunk.arity) for an index of \(index.arity)")
        let payload = try encode { try chunk.encoded() }
        let body =
            payload.count <= LogLimits.maxFrameRawByteCount
            ? try OutgoingFrame(type: .checkpointIndexChunk, transactionID: transactionID, payload: payload)
                .encodeBody(seed: seed, dictionary: nil, arrays: arrays) : nil
        return EncodedIndexChunk(
            payloadByteCount: payload.count, body: body, entryCount: chunk.entryCount,
            firstValues: Array(chunk.values(ofEntry: 0)), lastValues: Array(chunk.values(ofEntry: chunk.entryCount - 1))
        )
    }
}
