import LogFormat

extension Store {
    /// Opens a store: replays the backend's log (the latest checkpoint, then the tail) into snapshots.
    ///
    /// - Parameters:
    ///   - model: the application's model; `nil` takes the model recorded in the log (tools).
    ///   - untilTransaction: stop after this transaction (a read-only view *as of* it).
    ///   - source: what errors call the log (its path).
    /// - Throws: ``EventGraphError/Code/modelMismatch`` when the log was written with another model; an error
    ///   naming the file, the transaction and the object when an operation does not fit the state.
    static func open(
        backend: any LogBackend, model: ObjectModel?, untilTransaction: UInt64? = nil,
        source: String = "the in-memory log", decodedChunkByteBudget: Int = DecodedChunkCache.defaultByteBudget
    ) throws(EventGraphError) -> Store {
        try open(
            model: model, untilTransaction: untilTransaction, source: source,
            decodedChunkByteBudget: decodedChunkByteBudget
        ) { consume throws(EventGraphError) in
            try backend.replay(through: untilTransaction, consume)
            return backend
        }
    }

    /// Opens a store whose backend replays while it opens (the file backend replays during its recovery scan).
    ///
    /// `decodedChunkByteBudget` bounds the decoded checkpoint chunks kept in memory (see ``DecodedChunkCache``).
    static func open(
        model: ObjectModel?, untilTransaction: UInt64? = nil, source: String = "the in-memory log",
        decodedChunkByteBudget: Int = DecodedChunkCache.defaultByteBudget,
        makeBackend: ((ReplayRecord) throws(EventGraphError) -> Void) throws(EventGraphError) -> any LogBackend
    ) throws(EventGraphError) -> Store {
        var replayer = Replayer(model: model, untilTransaction: untilTransaction, policy: .strict, source: source)
        replayer.decodedChunkByteBudget = decodedChunkByteBudget
        replayer.defersIndexes = true
        let backend = try makeBackend { record throws(EventGraphError) in try replayer.consume(record) }
        let isReadOnly = untilTransaction != nil || backend.isReadOnly
        guard let resolvedModel = replayer.model else {
            guard let model, !isReadOnly else {
                throw EventGraphError(.modelMismatch, "the log records no model, and none was given")
            }
            try backend.append(schema: model.schema)
            return Store(model: model, backend: backend, state: StoreState(model: model), isReadOnly: false)
        }
        // First: a view older than a checkpoint the log starts with has no state at all (the replayer skipped the
        // checkpoint), which the check after this one would take for a log that ends early.
        if let floor = replayer.checkpointFloor, let until = untilTransaction, until < floor {
            throw EventGraphError(
                .invalidArgument,
                "the log was compacted at transaction \(floor) (by a compaction, or a migration that kept only the "
                    + "live state); history before it is gone (asked for \(until))")
        }
        if let until = untilTransaction, until > replayer.state!.lastTransactionID {
            var end = "the log ends at transaction \(replayer.state!.lastTransactionID)"
            if let report = backend.recoveryReport, report.kind == .stoppedAtDamage {
                end = "the log can be read up to transaction \(replayer.state!.lastTransactionID) (\(report))"
            }
            throw EventGraphError(.invalidArgument, "\(end); cannot view it as of transaction \(until)")
        }
        if model != nil, !isReadOnly, replayer.recordedSchema != resolvedModel.schema {
            // Same shape, other metadata (a new index or default, a new version identifier, a hash recorded by an
            // older release): record the model in force, so that records written from now on are read against it.
            try backend.append(schema: resolvedModel.schema)
        }
        let store = Store(
            model: resolvedModel, backend: backend, state: replayer.state!, isReadOnly: isReadOnly,
            transactionIDGaps: replayer.transactionIDGaps)
        store.automaticCheckpoint.recordCheckpoint(at: replayer.checkpointFloor ?? 0)
        return store
    }
}

extension Store {
    /// What opening left out of the store: the backend's report (a torn tail cut off, damage a view stops at),
    /// with the transaction IDs the log lacks (the gaps a salvage leaves) added.
    func recoveryReport(path: String) -> StoreRecoveryReport? {
        var report = backend.recoveryReport
        guard !transactionIDGaps.isEmpty else { return report }
        if report == nil {
            report = StoreRecoveryReport(
                kind: .missingTransactions, path: path, byteOffset: 0, byteCount: 0,
                reason: "a salvage left them out", transactionIDs: nil, lastTransactionID: lastTransactionID)
        }
        report!.missingTransactionIDs = transactionIDGaps
        return report
    }
}
