import LogFormat

extension Store {
    /// Opens a store: replays the backend's log (the latest checkpoint, then the tail) into snapshots.
    ///
    /// - Parameters:
    ///   - model: the application's model; `nil` takes the model recorded in the log (tools).
    ///   - untilTransaction: stop after this transaction (a read-only view *as of* it).
    /// - Throws: ``EventGraphError/Code/modelMismatch`` when the log was written with another model.
    static func open(backend: any LogBackend, model: ObjectModel?, untilTransaction: UInt64? = nil)
        throws(EventGraphError) -> Store
    {
        try open(model: model, untilTransaction: untilTransaction) { consume throws(EventGraphError) in
            try backend.replay(consume)
            return backend
        }
    }

    /// Opens a store whose backend replays while it opens (the file backend replays during its recovery scan).
    static func open(
        model: ObjectModel?, untilTransaction: UInt64? = nil,
        makeBackend: ((ReplayRecord) throws(EventGraphError) -> Void) throws(EventGraphError) -> any LogBackend
    ) throws(EventGraphError) -> Store {
        var replayer = Replayer(model: model, untilTransaction: untilTransaction)
        let backend = try makeBackend { record throws(EventGraphError) in try replayer.consume(record) }
        let isReadOnly = untilTransaction != nil || backend.isReadOnly
        guard let resolvedModel = replayer.model else {
            guard let model, !isReadOnly else {
                throw EventGraphError(.modelMismatch, "the log records no model, and none was given")
            }
            try backend.append(schema: model.schema)
            return Store(model: model, backend: backend, state: StoreState(model: model), isReadOnly: false)
        }
        if let until = untilTransaction, until > replayer.state!.lastTransactionID {
            var end = "the log ends at transaction \(replayer.state!.lastTransactionID)"
            if let report = backend.recoveryReport, report.kind == .stoppedAtDamage {
                end = "the log can be read up to transaction \(replayer.state!.lastTransactionID) (\(report))"
            }
            throw EventGraphError(.invalidArgument, "\(end); cannot view it as of transaction \(until)")
        }
        if let floor = replayer.checkpointFloor, let until = untilTransaction, until < floor {
            throw EventGraphError(
                .invalidArgument,
                "the log was compacted at transaction \(floor); history before it is gone (asked for \(until))")
        }
        if model != nil, !isReadOnly, replayer.recordedSchema != resolvedModel.schema {
            // Same shape, other metadata (a new index or default, a new version identifier, a hash recorded by an
            // older release): record the model in force, so that records written from now on are read against it.
            try backend.append(schema: resolvedModel.schema)
        }
        return Store(model: resolvedModel, backend: backend, state: replayer.state!, isReadOnly: isReadOnly)
    }
}

/// Turns replay records into a ``StoreState``.
struct Replayer {
    private(set) var model: ObjectModel?
    private let givenModel: ObjectModel?
    private let untilTransaction: UInt64?
    private(set) var state: StoreState?
    private(set) var checkpointFloor: UInt64?
    /// The schema frame in force (the last one replayed).
    private(set) var recordedSchema: SchemaPayload?
    /// The values of properties a record leaves out, per entity: the defaults of the schema frame in force when
    /// the record was written — not the model's, which may have changed since.
    private var recordedDefaults: [[PropertyValue]] = []
    private var checkpoint: (begin: CheckpointBegin, state: StoreState, count: UInt64)?

    init(model: ObjectModel?, untilTransaction: UInt64?) {
        self.givenModel = model
        self.untilTransaction = untilTransaction
    }

    mutating func consume(_ record: ReplayRecord) throws(EventGraphError) {
        switch record {
        case .schema(let schema):
            try adopt(schema)
        case .transaction(let changeset, let handles):
            guard let model, state != nil else {
                throw EventGraphError(.log, "a transaction precedes the model in the log")
            }
            if let until = untilTransaction, changeset.transactionID > until { return }
            // Transactions a checkpoint already contains are skipped.
            if checkpointFloor != nil, changeset.transactionID <= state!.lastTransactionID { return }
            try state!.replay(changeset, blobHandles: handles, model: model, insertDefaults: recordedDefaults)
        case .checkpointBegin(let begin):
            guard let model else { throw EventGraphError(.log, "a checkpoint precedes the model in the log") }
            var fresh = StoreState(model: model)
            fresh.lastTransactionID = begin.lastTransactionID
            fresh.lastCommitTimeMicroseconds = begin.lastCommitTimeMicroseconds
            fresh.nextKey = begin.nextKey
            checkpoint = (begin, fresh, 0)
        case .checkpointBlob(let transactionID, let index, let handle):
            checkpoint?.state.blobHandles[BlobKey(transactionID: transactionID, index: index)] = handle
        case .checkpointChunk(let chunk):
            guard let model, checkpoint != nil else {
                throw EventGraphError(.log, "a checkpoint chunk outside a checkpoint")
            }
            let version = checkpoint!.begin.lastTransactionID
            for record in chunk.records {
                let entityIndex = Int(record.object.entityIndex)
                guard entityIndex < model.entities.count else {
                    throw EventGraphError(.log, "a checkpoint names entity #\(entityIndex), which the model lacks")
                }
                var values = recordedDefaults[entityIndex]
                for change in record.properties where Int(change.propertyIndex) < values.count {
                    values[Int(change.propertyIndex)] = change.value
                }
                let row = Row(entityIndex: entityIndex, key: record.object.key, version: version, values: values)
                checkpoint!.state.tables[entityIndex].put(row)
                for constraint in model.entities[entityIndex].uniqueConstraints {
                    if let tuple = UniqueKey(constraint, values: values) {
                        checkpoint!.state.uniqueIndex[tuple] = row.key
                    }
                }
            }
            checkpoint!.count += UInt64(chunk.records.count)
        case .checkpointEnd(let end):
            guard let current = checkpoint else { throw EventGraphError(.log, "a checkpoint end without a beginning") }
            guard end.objectCount == current.count, current.begin.objectCount == current.count else {
                throw EventGraphError(
                    .log, "a checkpoint announces \(current.begin.objectCount) objects but holds \(current.count)")
            }
            if let until = untilTransaction, until < current.begin.lastTransactionID {
                // An as-of view older than the checkpoint cannot be built; keep the error for open to report.
                checkpointFloor = current.begin.lastTransactionID
                checkpoint = nil
                return
            }
            state = current.state
            state!.rebuildIndexes()
            checkpointFloor = current.begin.lastTransactionID
            checkpoint = nil
        }
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
                throw EventGraphError(
                    .modelMismatch, "the log changes its model's shape mid-way; migration is not supported yet")
            }
            if givenModel == nil {
                // Tools follow the recorded metadata (indexes, defaults) of the latest schema frame.
                let latest = try ObjectModel(schema: schema)
                self.model = latest
                state!.adoptIndexes(of: latest)
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
            state = StoreState(model: model!)
        } else {
            model = try ObjectModel(schema: schema)
            state = StoreState(model: model!)
        }
        recordedSchema = schema
        recordedDefaults = schema.entities.map { entity in
            entity.properties.map { property in
                SchemaCatalog.isPersistent(property) ? SchemaCatalog.defaultValue(of: property) : .attribute(.null)
            }
        }
    }
}
