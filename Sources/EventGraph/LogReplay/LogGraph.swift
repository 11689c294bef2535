package import LogFormat

/// The object graph a log describes, replayed by the one engine (``Replayer`` over a ``StoreState``) from the log
/// alone, with the tolerant policy: what does not fit is reported in ``anomalies``, not thrown.
///
/// The tools (`egctl`) read stores through it: it answers by entity and key, names entities and properties from
/// the schema in force, and gives the live state's ``StateDigest`` and integrity issues — the same the library
/// computes for the same state, since the state is the library's own type.
package struct LogGraph: Sendable {
    var replayer: Replayer
    /// The schema in force (the last schema record seen).
    package private(set) var catalog: SchemaCatalog?
    /// Whether each checkpoint's stored indexes (format 1.4) are read and compared with the checkpoint's objects
    /// when the checkpoint ends (`egctl verify`); differences are integrity issues.
    package var checksStoredIndexes = false
    /// The directory of the checkpoint being read, while its stored indexes wait for its end to be checked.
    var pendingIndexDirectory: CheckpointDirectory?
    /// What the stored-index checks found.
    var storedIndexIssues: [String] = []

    /// The log a checkpoint's entity chunks are read from when the scan that feeds this graph leaves their bodies
    /// to their first load (`defersEntityChunkBodies`): its directory is then adopted as a store's open adopts it,
    /// and every chunk read and decoded, on every core, when the checkpoint ends (the library's own chunk decoder:
    /// `egctl replay` of a compacted 1M-post store took 0.9 s this way, 3.1 s a record at a time on one core).
    /// `nil`: the scan delivers every chunk's records.
    package var chunkReader: LogReader?

    /// An empty graph; feed it records with ``apply(_:)-(LogRecord)``.
    ///
    /// - Parameter source: what anomalies and errors call the log (its path).
    package init(source: String = "the log") {
        // Tools need neither the uniqueness index nor attribute indexes (integrity is checked on the final state).
        replayer = Replayer(model: nil, untilTransaction: nil, policy: .tolerant, buildsIndexes: false, source: source)
        replayer.makesCheckpointChunksResident = true
    }

    /// Replays the log at `path` from its bytes alone: every frame verified, each checkpoint's entity chunks read by
    /// the library's chunk decoder on every core.
    ///
    /// - Throws: an I/O error, a payload that does not decode, a damaged checkpoint chunk.
    package static func replaying(path: String) throws -> LogGraph {
        let reader = try LogReader(path: path)
        var graph = LogGraph(source: path)
        graph.chunkReader = reader
        try reader.scan(defersEntityChunkBodies: true, checksumsDeferredBodies: true) { try graph.apply($0) }
        return graph
    }

    /// The graph of a library store's committed state (for checks that compare the two).
    init(model: ObjectModel, state: StoreState) {
        self.init()
        // Replaying the model's own schema cannot fail.
        try! replayer.consume(.schema(model.schema))
        replayer.replace(state: state)
        catalog = SchemaCatalog(model.schema)
    }

    /// Applies one record read from a log. Returns the decoded changeset for transactions (callers print it).
    ///
    /// - Throws: when a payload does not decode, or the schema does not describe a model.
    @discardableResult
    package mutating func apply(_ record: LogRecord) throws -> Changeset? {
        if checksStoredIndexes, case .checkpointDirectory(let directory, _) = record, !directory.indexes.isEmpty {
            pendingIndexDirectory = directory
        }
        let reader = chunkReader
        guard let converted = try FileBackend.convert(record, chunkReader: reader.map { reader in { reader } })
        else { return nil }
        try replayer.consume(converted)
        if case .checkpointEnd = converted, let directory = pendingIndexDirectory {
            pendingIndexDirectory = nil
            storedIndexIssues += storedIndexIssues(of: directory)
        }
        switch converted {
        case .schema(let schema): catalog = SchemaCatalog(schema)
        case .transaction(let changeset, _): return changeset.changeset
        default: break
        }
        return nil
    }

    /// Applies a decoded changeset whose blob frames are at `blobs` (callers that decoded the transaction
    /// themselves use this instead of ``apply(_:)-(LogRecord)`` to decode it once).
    package mutating func apply(_ changeset: Changeset, blobs: [BlobLocation]) {
        apply(ReplayChangeset(changeset), blobs: blobs)
    }

    /// Applies a transaction record of a log (decoded flat, the values going from its payload into the columns);
    /// returns the header of its changeset. Callers that need the whole ``Changeset`` decode it with
    /// ``apply(_:blobs:)-(Changeset,_)``.
    ///
    /// - Throws: when the payload does not decode.
    @discardableResult
    package mutating func apply(_ transaction: TransactionRecord) throws(LogFormatError) -> ChangesetHeader {
        let changeset = try ReplayChangeset(transaction)
        apply(changeset, blobs: transaction.blobs)
        return changeset.header
    }

    /// Applies a changeset decoded flat from a transaction whose blob frames are at `blobs` (callers that read the
    /// header before applying: the values go from the payload's bytes into the columns).
    package mutating func apply(_ changeset: ReplayChangeset, blobs: [BlobLocation]) {
        do {
            try replayer.consume(
                .transaction(changeset, blobHandles: blobs.sorted { $0.index < $1.index }.map(\.byteOffset)))
        } catch {
            // The tolerant policy records what does not fit; only schema records (a model that does not resolve)
            // can throw.
            preconditionFailure("a tolerant replay of a transaction threw: \(error)")
        }
    }

    /// The live state as checkpoint chunks (the engine's one checkpoint writer), handed to `body` one at a time as
    /// each is built (never all at once).
    package func forEachCheckpointChunk(
        recordsPerChunk: Int = StoreState.checkpointChunkObjectCount, _ body: (CheckpointChunk) throws -> Void
    ) rethrows {
        guard let state, let model else { return }
        try state.forEachCheckpointChunk(model: model, recordsPerChunk: recordsPerChunk, body)
    }

    /// The external values the live objects reference, with where the log holds them.
    package func referencedBlobs() -> [(BlobReference, BlobLocation)] {
        guard let state, let model else { return [] }
        return state.referencedBlobs(model: model).compactMap { reference in
            let key = BlobKey(transactionID: reference.transactionID, index: reference.index)
            guard let offset = state.blobHandles[key] else { return nil }
            return (
                reference,
                BlobLocation(
                    transactionID: reference.transactionID, index: reference.index, byteOffset: offset,
                    byteCount: UInt32(clamping: reference.byteCount))
            )
        }
    }

    var state: StoreState? { replayer.state }
    var model: ObjectModel? { replayer.model }

    /// The model the log records (the latest schema frame's metadata).
    package var recordedModel: ObjectModel? { model }

    /// Every live object, by entity, in commit order.
    package var objectReferences: [ObjectReference] {
        guard let state, let model else { return [] }
        var references: [ObjectReference] = []
        references.reserveCapacity(state.objectCount)
        for entityIndex in model.entities.indices {
            state.forEachRow(ofEntity: entityIndex) { references.append($0.reference) }
        }
        return references
    }

    /// The number of live objects; while a checkpoint is being read, the objects it holds so far (a checkpoint
    /// replaces the state at its end record, which must announce this count).
    package var objectCount: Int { replayer.pendingCheckpointObjectCount ?? state?.objectCount ?? 0 }

    /// Whether `object` is live.
    package func contains(_ object: ObjectReference) -> Bool { row(object) != nil }

    /// The last transaction applied, and its commit time (µs since 1970).
    package var lastTransactionID: UInt64 { state?.lastTransactionID ?? 0 }
    package var lastCommitTimeMicroseconds: Int64 { state?.lastCommitTimeMicroseconds ?? 0 }
    /// The next object key the store allocates.
    package var nextKey: UInt64 { state?.nextKey ?? 1 }
    /// Every named counter (sequence generator) with the last value it handed out, by name.
    package var sequenceReservations: [SequenceReservation] { state?.sequenceReservations ?? [] }
    /// Records and operations that did not fit the state (an update of an object that does not exist, …), in order.
    package var anomalies: [String] { replayer.anomalies }
    /// The transaction IDs the log lacks since its last checkpoint (the gaps a salvage leaves).
    package var transactionIDGaps: [ClosedRange<UInt64>] { replayer.transactionIDGaps }

    /// The value of a property of a live object.
    package func value(of object: ObjectReference, property: Int) -> PropertyValue? {
        guard let row = row(object), property >= 0, property < row.values.count else { return nil }
        return row.values[property]
    }

    /// The UUID of the store a reference points into (nil for this store).
    package func storeUUID(of reference: ObjectReference) -> LogUUID? { state?.storeUUID(of: reference) }

    /// "Post #42" — an object's entity name and key.
    package func describe(_ object: ObjectReference) -> String {
        guard let state, let model else { return "#\(object.entityIndex) #\(object.key)" }
        return state.describe(object, model: model)
    }

    /// The canonical digest of the live state (see ``StateDigest``).
    package func digest() -> StateDigest {
        guard let state, let model else { return DigestSum().digest }
        // Its callers (egctl's replay and verify, a rewrite's check by replay) have replayed the log and wait for the
        // digest alone: a core is free for a helper that hashes half the chunks.
        return state.digest(model: model, helperThread: true)
    }

    /// The replay anomalies, then the violations of the model's rules in the live state; at most `limit`.
    package func integrityIssues(limit: Int = 100) -> [IntegrityIssue] {
        var issues = anomalies.prefix(limit).map { IntegrityIssue(kind: .replayAnomaly, message: $0) }
        issues += storedIndexIssues.prefix(limit - issues.count).map {
            IntegrityIssue(kind: .storedIndexMismatch, message: $0)
        }
        if let state, let model, issues.count < limit {
            issues += state.integrityIssues(model: model, limit: limit - issues.count)
        }
        return issues
    }

    private func row(_ object: ObjectReference) -> Row? {
        guard let state, object.storeIndex == 0, Int(object.entityIndex) < (model?.entities.count ?? 0) else {
            return nil
        }
        return state.row(entityIndex: Int(object.entityIndex), key: object.key)
    }
}
