import LogFormat

extension StoreState {
    /// The largest number of objects in one checkpoint chunk (chunks are also split to fit a frame).
    static let checkpointChunkObjectCount = 2048

    /// The one checkpoint writer: every live object with its persistent values that differ from the model's
    /// defaults (a checkpoint record leaves defaults out, as an insert does), in chunks that fit a frame, handed to
    /// `body` one at a time as each is filled (a chunk is built only after the previous one was handed out, so a
    /// caller that writes each chunk holds one, never the whole checkpoint).
    func forEachCheckpointChunk(
        model: ObjectModel, recordsPerChunk: Int = checkpointChunkObjectCount,
        _ body: (CheckpointChunk) throws -> Void
    ) rethrows {
        var records: [ObjectRecord] = []
        var recordBytes = 0
        for entityIndex in model.entities.indices {
            let entity = model.entities[entityIndex]
            try forEachRow(ofEntity: entityIndex) { row in
                let (record, byteCount) = Self.record(of: row, entity: entity)
                records.append(record)
                recordBytes += byteCount
                if records.count >= recordsPerChunk || recordBytes >= LogLimits.maxFrameRawByteCount / 4 {
                    try body(CheckpointChunk(foreignStores: foreignStores, records: records))
                    records.removeAll(keepingCapacity: true)
                    recordBytes = 0
                }
            }
        }
        if !records.isEmpty { try body(CheckpointChunk(foreignStores: foreignStores, records: records)) }
    }

    /// The live objects in the chunk layout (format 1.3, `Docs/FileFormat-Checkpoints.md`): per entity, one entity
    /// chunk per column chunk that holds live objects, in slot order, so that a reader loads chunk *i* of an entity
    /// into its column chunk *i*. An entity one of whose chunks might not fit a frame (a very large value) is
    /// returned as ordinary chunks instead, split as ``forEachCheckpointChunk(model:recordsPerChunk:_:)`` splits.
    ///
    /// The records are built here; a compaction encodes the same chunks from the columns instead
    /// (``checkpointEntityChunkPlan(model:nextKey:)``): this is the reference it is tested against.
    func checkpointEntityChunks(model: ObjectModel, nextKey: UInt64)
        -> (begin: CheckpointBegin, entityChunks: [CheckpointChunk], chunks: [CheckpointChunk])
    {
        var entityChunks: [CheckpointChunk] = []
        var chunks: [CheckpointChunk] = []
        for entityIndex in model.entities.indices {
            let (records, fitsFrames) = entityRecords(of: entityIndex, model: model)
            if fitsFrames {
                entityChunks += records.map { CheckpointChunk(foreignStores: foreignStores, records: $0) }
            } else {
                chunks += batchedChunks(of: records)
            }
        }
        return (checkpointBegin(nextKey: nextKey), entityChunks, chunks)
    }

    /// What a checkpoint of this state writes, with the entity chunks left to be encoded from the columns
    /// (``ColumnChunk/checkpointPayload(entityIndex:entity:foreignStores:)``), a batch at a time as the rewrite
    /// writes them: the same file as ``checkpointEntityChunks(model:nextKey:)``'s records make, without a record,
    /// a value or a string per value, and without the whole checkpoint held at once.
    func checkpointEntityChunkPlan(model: ObjectModel, nextKey: UInt64) -> CheckpointEntityChunkPlan {
        var plan = CheckpointEntityChunkPlan(begin: checkpointBegin(nextKey: nextKey), foreignStores: foreignStores)
        for entityIndex in model.entities.indices {
            let table = tables[entityIndex]
            let entity = model.entities[entityIndex]
            var live: [(chunk: ColumnChunk, stored: LazyColumnChunk?)] = []
            var surelyFits = true
            for chunkIndex in 0..<table.chunkCount {
                let chunk = table.chunk(at: chunkIndex)
                guard chunk.liveBits.contains(where: { $0 != 0 }) else { continue }
                // A chunk this version still holds as the checkpoint's is unchanged since: copied as stored when
                // encoding it would give the same payload.
                let stored = table.checkpointChunk(at: chunkIndex).flatMap {
                    $0.isCopyable(as: entity, foreignStores: foreignStores) ? $0 : nil
                }
                live.append((chunk, stored))
                if Self.checkpointByteBound(of: chunk) > LogLimits.maxFrameRawByteCount - 4096 { surelyFits = false }
            }
            guard !live.isEmpty else { continue }
            // The bound is never below the records' estimate, so under the limit the records' decision is the same;
            // over it, the records decide (a chunk of very large values, or one whose arena holds much garbage).
            if !surelyFits {
                let (records, fitsFrames) = entityRecords(of: entityIndex, model: model)
                if !fitsFrames {
                    plan.chunks += batchedChunks(of: records)
                    continue
                }
            }
            plan.entityChunks += live.map { (entityIndex, $0.chunk, $0.stored) }
        }
        return plan
    }

    /// A bound on the records' size estimate of a chunk's live objects (``record(ofSlot:in:entityIndex:entity:)``):
    /// every value counted, defaults included, and the arenas' and lists' garbage too.
    private static func checkpointByteBound(of chunk: ColumnChunk) -> Int {
        let liveCount = chunk.liveBits.reduce(0) { $0 + $1.nonzeroBitCount }
        var total = liveCount * 16
        for column in chunk.columns {
            total += liveCount * 16 + column.arena.bytes.count + 16 * column.storedManyTargetCount
        }
        return total
    }

    /// One entity's checkpoint records, one list per column chunk that holds live objects, and whether each list's
    /// estimated size fits a frame.
    private func entityRecords(of entityIndex: Int, model: ObjectModel) -> (records: [[ObjectRecord]], fits: Bool) {
        let entity = model.entities[entityIndex]
        var perChunk: [[ObjectRecord]] = []
        var fitsFrames = true
        var chunkBytes = 0
        var currentChunk = -1
        tables[entityIndex].forEachLiveSlot { chunk, position, slot in
            if slot / ColumnChunk.slotCapacity != currentChunk {
                currentChunk = slot / ColumnChunk.slotCapacity
                perChunk.append([])
                chunkBytes = 0
            }
            let (record, byteCount) = Self.record(ofSlot: position, in: chunk, entityIndex: entityIndex, entity: entity)
            perChunk[perChunk.count - 1].append(record)
            // The estimate is never below the encoded size, so a chunk under the limit fits its frame.
            chunkBytes += byteCount
            if chunkBytes > LogLimits.maxFrameRawByteCount - 4096 { fitsFrames = false }
        }
        return (perChunk, fitsFrames)
    }

    /// An entity's records as ordinary checkpoint chunks, split as ``forEachCheckpointChunk(model:recordsPerChunk:_:)``
    /// splits.
    private func batchedChunks(of records: [[ObjectRecord]]) -> [CheckpointChunk] {
        var chunks: [CheckpointChunk] = []
        var batch: [ObjectRecord] = []
        var batchBytes = 0
        for record in records.joined() {
            batch.append(record)
            batchBytes += record.properties.reduce(16) { $0 + Self.estimatedByteCount($1.value) }
            if batch.count >= Self.checkpointChunkObjectCount || batchBytes >= LogLimits.maxFrameRawByteCount / 4 {
                chunks.append(CheckpointChunk(foreignStores: foreignStores, records: batch))
                batch.removeAll(keepingCapacity: true)
                batchBytes = 0
            }
        }
        if !batch.isEmpty { chunks.append(CheckpointChunk(foreignStores: foreignStores, records: batch)) }
        return chunks
    }

    private func checkpointBegin(nextKey: UInt64) -> CheckpointBegin {
        var begin = CheckpointBegin(
            lastTransactionID: lastTransactionID, lastCommitTimeMicroseconds: lastCommitTimeMicroseconds,
            nextKey: nextKey, objectCount: UInt64(objectCount))
        begin.sequenceReservations = sequenceReservations
        return begin
    }

    /// A checkpoint record of a row (its persistent values that differ from the model's defaults), with an
    /// estimate of its encoded size that is never below it.
    private static func record(of row: Row, entity: EntityDescription) -> (ObjectRecord, Int) {
        var properties: [PropertyChange] = []
        var byteCount = 16
        for (index, value) in row.values.enumerated()
        where entity.isPersistentProperty[index] && value != entity.defaultValues[index] {
            properties.append(PropertyChange(propertyIndex: UInt32(index), value: value))
            byteCount += estimatedByteCount(value)
        }
        return (ObjectRecord(object: row.reference, properties: properties), byteCount)
    }

    /// ``record(of:entity:)`` of a live slot's row, read from the columns without building the row.
    private static func record(
        ofSlot position: Int, in chunk: ColumnChunk, entityIndex: Int, entity: EntityDescription
    ) -> (ObjectRecord, Int) {
        var properties: [PropertyChange] = []
        var byteCount = 16
        let count = Int(chunk.valueCounts[position])
        // Columns are borrowed through a pointer (`chunk.columns[i]`, and an unsafe buffer's subscript, copy the whole
        // column per value: a retain and a release of each of its storages).
        chunk.columns.withUnsafeBufferPointer { buffer in
            precondition(count <= buffer.count, "a row of \(count) values in a chunk of \(buffer.count) columns")
            guard let columns = buffer.baseAddress else { return }
            for index in 0..<count where entity.isPersistentProperty[index] {
                let value = columns[index].value(at: position) ?? .attribute(.null)
                guard value != entity.defaultValues[index] else { continue }
                properties.append(PropertyChange(propertyIndex: UInt32(index), value: value))
                byteCount += estimatedByteCount(value)
            }
        }
        let reference = ObjectReference(entityIndex: UInt32(entityIndex), key: chunk.keys[position])
        return (ObjectRecord(object: reference, properties: properties), byteCount)
    }

    /// The external values the live objects reference, each once, in (transaction, index) order.
    func referencedBlobs(model: ObjectModel) -> [BlobReference] {
        var seen: Set<BlobKey> = []
        var blobs: [BlobReference] = []
        // Every attribute is looked at, not only those the model stores externally: the log is the authority. A
        // column keeps its blob references apart from its other values, so no row is built for this.
        for entityIndex in model.entities.indices where entityIndex < tables.count {
            for chunk in tables[entityIndex].chunks {
                for (property, column) in chunk.columns.enumerated() {
                    column.forEachBlob { slot, reference in
                        guard chunk.isLive(slot), property < chunk.valueCounts[slot],
                            seen.insert(BlobKey(transactionID: reference.transactionID, index: reference.index))
                                .inserted
                        else { return }
                        blobs.append(reference)
                    }
                }
            }
        }
        return blobs.sorted { ($0.transactionID, $0.index) < ($1.transactionID, $1.index) }
    }

    private static func estimatedByteCount(_ value: PropertyValue) -> Int {
        switch value {
        case .attribute(.string(let s)), .attribute(.url(let s)), .attribute(.decimal(let s)): 8 + s.utf8.count
        case .attribute(.binary(let b)), .attribute(.transformable(let b)): 8 + b.count
        case .attribute: 16
        case .toOne: 16
        case .toMany(let references): 8 + 16 * references.count
        }
    }
}

/// What a checkpoint of a state writes, its entity chunks still to be encoded from their columns.
struct CheckpointEntityChunkPlan: Sendable {
    var begin: CheckpointBegin
    /// The store UUIDs that references with a store index above 0 name, listed in every chunk.
    var foreignStores: [LogUUID]
    /// The column chunks written as entity chunks, in the file's order (entity after entity, slot order), each
    /// with at least one live object; with the old checkpoint's chunk when it is copied as stored
    /// (``LazyColumnChunk/isCopyable(as:foreignStores:)``).
    var entityChunks: [(entityIndex: Int, chunk: ColumnChunk, stored: LazyColumnChunk?)] = []
    /// The objects of the entities that might not fit a frame per chunk, as ordinary checkpoint chunks.
    var chunks: [CheckpointChunk] = []

    /// How many of ``entityChunks`` are copied as stored.
    var copiedEntityChunkCount: Int { entityChunks.reduce(0) { $0 + ($1.stored == nil ? 0 : 1) } }

    /// Entity chunk `index` of ``entityChunks``: the old checkpoint's frame read again and verified when it is
    /// copied, else encoded from the columns (into an array of `arrays` when given).
    func entityChunkContent(_ index: Int, model: ObjectModel, arrays: ByteArrayPool? = nil)
        throws(LogFormatError) -> EntityChunkContent
    {
        if let stored = entityChunks[index].stored { return .stored(try stored.storedChunk()) }
        return .encoded(try entityChunkPayload(index, model: model, arrays: arrays))
    }

    /// Entity chunk `index` of ``entityChunks`` encoded from the columns (whether or not it is copied), into an
    /// array of `arrays` when given.
    func entityChunkPayload(_ index: Int, model: ObjectModel, arrays: ByteArrayPool? = nil)
        throws(LogFormatError) -> EntityChunkPayload
    {
        let (entityIndex, chunk, _) = entityChunks[index]
        return try chunk.checkpointPayload(
            entityIndex: entityIndex, entity: model.entities[entityIndex], foreignStores: foreignStores,
            arrays: arrays)
    }
}
