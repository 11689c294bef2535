import LogFormat

/// The replay engine: turns the records of a log (schema, transactions, checkpoints) into a ``StoreState``.
///
/// It works from the log alone — the model comes from the schema frame — or maps a given model onto the log's
/// (the library's typed models). The library's open runs it with the strict policy, the tools with the tolerant
/// one (see ``ReplayPolicy``); both build the same state, so their digests agree by construction.
struct Replayer {
    private(set) var model: ObjectModel?
    private let givenModel: ObjectModel?
    private let untilTransaction: UInt64?
    let policy: ReplayPolicy
    /// Whether the state keeps its uniqueness and attribute indexes (a store's does; a tool's need not).
    let buildsIndexes: Bool
    /// What errors name as the log: its path, or "the in-memory log".
    let source: String
    /// Whether transactions are applied to the columns in place (`false`: staged and installed as a commit is, for
    /// tests that compare the two; both build the same state).
    let appliesInPlace: Bool
    private(set) var state: StoreState?
    private(set) var checkpointFloor: UInt64?
    /// The schema frame in force (the last one replayed).
    private(set) var recordedSchema: SchemaPayload?
    /// Under the tolerant policy: every record or operation that did not fit the state and was skipped, in order.
    private(set) var anomalies: [String] = []
    /// The transaction IDs the log lacks since its last checkpoint (or its start): the gaps a salvage leaves.
    private(set) var transactionIDGaps: [ClosedRange<UInt64>] = []
    /// The values of properties a record leaves out, per entity: the defaults of the schema frame in force when
    /// the record was written — not the model's, which may have changed since.
    private var recordedDefaults: [[PropertyValue]] = []
    private var checkpoint: (begin: CheckpointBegin, state: StoreState, count: UInt64)?
    /// Whether a checkpoint's entity chunks, adopted from its directory as chunks read on first touch, are all read
    /// and decoded (on every core) when the checkpoint ends: a tool's state, which reads every object (its digest,
    /// its checks) and reports a damaged chunk as the replay's error. A store's open leaves them on disk.
    var makesCheckpointChunksResident = false
    /// The budget of decoded checkpoint chunks the state's lazily loaded chunks share (``DecodedChunkCache``):
    /// `Int.max` (every chunk kept once decoded) unless a store's configuration sets one.
    var decodedChunkByteBudget = Int.max
    /// Whether the indexes of the state the log's first schema frame starts are left to first need
    /// (``StoreState/deferIndexes(model:)``): a store's open sets it; otherwise they are kept up to date through
    /// every transaction (the tests that compare that upkeep with staging's).
    var defersIndexes = false

    init(
        model: ObjectModel?, untilTransaction: UInt64?, policy: ReplayPolicy = .strict, buildsIndexes: Bool = true,
        source: String, appliesInPlace: Bool = true
    ) {
        self.appliesInPlace = appliesInPlace
        self.givenModel = model
        self.buildsIndexes = buildsIndexes
        self.untilTransaction = untilTransaction
        self.policy = policy
        self.source = source
    }

    /// Applies one record.
    mutating func consume(_ record: ReplayRecord) throws(EventGraphError) {
        do {
            try apply(record)
        } catch {
            // Errors of the strict policy name the transaction and the object; this adds the file.
            var located = error
            if !located.message.hasPrefix(source) { located.message = "\(source): \(located.message)" }
            throw located
        }
    }

    private mutating func apply(_ record: ReplayRecord) throws(EventGraphError) {
        switch record {
        case .schema(let schema):
            try adopt(schema)
        case .transaction(let changeset, let handles):
            guard let model, state != nil else {
                return try reject("transaction \(changeset.transactionID) precedes the model in the log")
            }
            if let until = untilTransaction, changeset.transactionID > until { return }
            // Transactions a checkpoint already contains are skipped.
            if checkpointFloor != nil, changeset.transactionID <= state!.lastTransactionID { return }
            // The checkpoint's chunks this transaction changes are loaded first, so that a damaged one stops the
            // replay with its error.
            let pins = try state!.loadChunks(changedBy: changeset.operations.lazy.map(\.object))
            // Held until it is applied: the budget of decoded chunks cannot make the replay read them again.
            let gap = try state!.replay(
                changeset, blobHandles: handles, model: model, insertDefaults: recordedDefaults, policy: policy,
                anomalies: &anomalies, inPlace: appliesInPlace)
            withExtendedLifetime(pins) {}
            if let gap { transactionIDGaps.append(gap) }
            changeset.recycleBuffer()
        case .checkpointBegin(let begin):
            guard let model else { return try reject("a checkpoint precedes the model in the log") }
            var fresh = StoreState(model: model, isIndexed: buildsIndexes)
            fresh.lastTransactionID = begin.lastTransactionID
            fresh.lastCommitTimeMicroseconds = begin.lastCommitTimeMicroseconds
            fresh.nextKey = begin.nextKey
            fresh.advanceSequences(begin.sequenceReservations)
            checkpoint = (begin, fresh, 0)
        case .checkpointBlob(let transactionID, let index, let handle):
            checkpoint?.state.blobHandles[BlobKey(transactionID: transactionID, index: index)] = handle
        case .checkpointChunk(let chunk):
            guard let model, checkpoint != nil else { return try reject("a checkpoint chunk outside a checkpoint") }
            try load(chunk, model: model)
        case .checkpointDirectory(let directory, let reader):
            guard let model, let current = checkpoint else {
                return try reject("a checkpoint directory outside a checkpoint")
            }
            try adopt(directory, reader: reader, model: model, checkpointTransactionID: current.begin.lastTransactionID)
        case .checkpointEnd(let end):
            guard var current = checkpoint else { return try reject("a checkpoint end without a beginning") }
            if end.objectCount != current.count || current.begin.objectCount != current.count {
                try reject("a checkpoint announces \(current.begin.objectCount) objects but holds \(current.count)")
            }
            checkpoint = nil
            checkpointFloor = current.begin.lastTransactionID
            if let until = untilTransaction, until < current.begin.lastTransactionID {
                // An as-of view older than the checkpoint cannot be built; keep the error for open to report.
                return
            }
            if makesCheckpointChunksResident { try current.state.makeCheckpointChunksResident() }
            state = current.state
            state!.rebuildIndexes()
            transactionIDGaps = []
        }
    }

    /// Takes the checkpoint's directory (format 1.3): every listed entity chunk stays on disk, in the state as an
    /// unloaded chunk read on first touch. Only the first chunk is read now, for the checkpoint's table of foreign
    /// stores (the writer gives every chunk the same one), which the state's references are expressed in.
    private mutating func adopt(
        _ directory: CheckpointDirectory, reader: LogReader, model: ObjectModel, checkpointTransactionID: UInt64
    ) throws(EventGraphError) {
        let source = CheckpointChunkSource(
            reader: reader, checkpointTransactionID: checkpointTransactionID,
            cache: DecodedChunkCache(byteBudget: decodedChunkByteBudget))
        if let first = directory.entities.first, Int(first.entityIndex) < model.entities.count {
            // Only its table of foreign stores is read: the frame is read and verified (a damaged one is refused
            // here, naming the chunk), the payload's leading table decoded, and its records left to its first touch,
            // which decodes and checks them (walking them here took a third of a 1M-post store's open: an author
            // chunk's lists of posts).
            let stores = try source.foreignStores(
                of: first.chunks[0], chunkIndex: 0, entityName: model.entities[Int(first.entityIndex)].name)
            for uuid in stores { _ = checkpoint!.state.storeIndex(of: uuid) }
        }
        let stored =
            buildsIndexes
            ? Self.storedIndexes(of: directory, source: source, model: model, writtenUnder: recordedSchema) : [:]
        for entity in directory.entities {
            let entityIndex = Int(entity.entityIndex)
            guard entityIndex < model.entities.count else {
                try reject("the checkpoint directory lists chunks of entity #\(entityIndex), not in the model")
                continue
            }
            let entityName = model.entities[entityIndex].name
            guard checkpoint!.state.objectCount(ofEntity: entityIndex) == 0 else {
                // Ordinary chunks already put objects of this entity in place (a writer's rule was broken): the
                // entity chunks are read now and their objects put after them, as before lazy loading.
                for (chunkIndex, entry) in entity.chunks.enumerated() {
                    let chunk = try source.load(
                        entry, chunkIndex: chunkIndex, entityIndex: entityIndex, entityName: entityName)
                    try load(chunk, model: model)
                }
                continue
            }
            let decoder = CheckpointChunkDecoder(
                source: source, entityIndex: entityIndex, entityName: entityName,
                defaults: recordedDefaults[entityIndex], foreignStores: checkpoint!.state.foreignStores,
                propertyNames: model.entities[entityIndex].properties.map(\.name))
            let chunks = entity.chunks.enumerated().map { chunkIndex, entry in
                LazyColumnChunk(entry: entry, chunkIndex: chunkIndex, decoder: decoder)
            }
            checkpoint!.state.adoptUnloadedChunks(
                chunks, entityIndex: entityIndex, storedIndexes: stored[entityIndex] ?? [], model: model)
            checkpoint!.count += entity.chunks.reduce(0) { $0 + UInt64($1.objectCount) }
        }
    }

    /// Loads the objects of a checkpoint chunk into the checkpoint being read.
    private mutating func load(_ chunk: CheckpointChunk, model: ObjectModel) throws(EventGraphError) {
        let version = checkpoint!.begin.lastTransactionID
        let records = checkpoint!.state.localizedRecords(of: chunk)
        for record in records {
            let entityIndex = Int(record.object.entityIndex)
            guard entityIndex < model.entities.count, record.object.storeIndex == 0 else {
                try reject("a checkpoint holds object \(record.object.key) of entity #\(entityIndex), not in the model")
                continue
            }
            var values = recordedDefaults[entityIndex]
            for change in record.properties {
                guard Int(change.propertyIndex) < values.count else {
                    try reject(
                        "a checkpoint sets property #\(change.propertyIndex) of \(model.entities[entityIndex].name) "
                            + "\(record.object.key), which its entity lacks")
                    continue
                }
                values[Int(change.propertyIndex)] = change.value
            }
            let row = Row(entityIndex: entityIndex, key: record.object.key, version: version, values: values)
            checkpoint!.state.put(row)
            for constraint in model.entities[entityIndex].uniqueConstraints where buildsIndexes {
                if let tuple = UniqueKey(constraint, values: values) { checkpoint!.state.uniqueIndex[tuple] = row.key }
            }
        }
        checkpoint!.count += UInt64(chunk.records.count)
    }

    /// Refuses a record (strict) or records it as an anomaly (tolerant).
    private mutating func reject(_ message: String) throws(EventGraphError) {
        guard policy == .tolerant else { throw EventGraphError(.log, message) }
        anomalies.append(message)
    }

    /// Takes a schema frame: the first one chooses the model (the given one, in the log's entity order, when the
    /// shapes agree); later ones may change metadata such as defaults and indexes, never the shape.
    private mutating func adopt(_ schema: SchemaPayload) throws(EventGraphError) {
        // The recorded `modelHash` is not trusted: stores written before the hash covered only the shape recorded
        // a hash of the whole schema, so the shape hash is recomputed from the recorded entities.
        let recordedHash = ModelShape.hash(of: schema.entities)
        let names = schema.entities.map(\.name)
        if let model {
            guard recordedHash == model.hash, names == model.entities.map(\.name) else {
                let message = "the log changes its model's shape mid-way; migration is not supported yet"
                guard policy == .tolerant else { throw EventGraphError(.modelMismatch, message) }
                // Later records are read against the model in force.
                anomalies.append(message)
                return
            }
            if givenModel == nil {
                // Tools follow the recorded metadata (indexes, defaults) of the latest schema frame.
                let latest = try ObjectModel(schema: schema)
                self.model = latest
                state!.adoptIndexes(of: latest, replacing: model)
            }
        } else if let givenModel {
            guard recordedHash == givenModel.hash else {
                throw EventGraphError(
                    .modelMismatch,
                    "the store was written with model '\(schema.modelName)' version \(schema.versionIdentifier) "
                        + "(shape hash \(String(recordedHash, radix: 16))), not '\(givenModel.name)' version "
                        + "\(givenModel.versionIdentifier) (shape hash \(String(givenModel.hash, radix: 16)))")
            }
            model = try givenModel.reordered(as: names)
            state = StoreState(model: model!, isIndexed: buildsIndexes)
            if defersIndexes { state!.deferIndexes(model: model!) }
        } else {
            model = try ObjectModel(schema: schema)
            state = StoreState(model: model!, isIndexed: buildsIndexes)
            if defersIndexes { state!.deferIndexes(model: model!) }
        }
        recordedSchema = schema
        recordedDefaults = schema.entities.map { entity in
            entity.properties.map { property in
                SchemaCatalog.isPersistent(property) ? SchemaCatalog.defaultValue(of: property) : .attribute(.null)
            }
        }
    }
}

extension Replayer {
    /// The number of objects of the checkpoint being read (between its begin and end records), if any.
    var pendingCheckpointObjectCount: Int? { checkpoint.map { $0.state.objectCount } }

    /// Takes a state built elsewhere (a library store's committed state) as the replayed one.
    mutating func replace(state: StoreState) {
        self.state = state
    }
}
