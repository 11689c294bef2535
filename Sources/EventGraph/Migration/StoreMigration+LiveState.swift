import LogFormat

/// A live-state migration in bounded memory: after the first pass (which maps every transaction, counts the live
/// objects and keeps their keys), the state is built and written one ``MigrationWindow`` at a time.
extension MigrationRun {
    /// Builds each window's state by a pass over the old log that keeps only the window's objects, appends its
    /// objects to one checkpoint and adds each window's objects to one state digest (``DigestSum``); returns the
    /// digest and the bytes of the checkpoint's chunks and external values.
    ///
    /// - Parameters:
    ///   - counters: the state without objects after the first pass: its last transaction, commit time, next key
    ///     and counters are the checkpoint's.
    ///   - spans: the keys each transaction touches, when every step is inferred (a window's pass then decodes
    ///     only the transactions that touch it); `nil` maps every transaction in every pass.
    ///   - validation: a dry run's check of the new model's rules, given each window's state.
    /// - Throws: ``EventGraphError`` (`log`) when a window holds other objects than the first pass counted.
    func writeLiveState(
        in windows: [MigrationWindow], counters: LogGraph, spans: MigrationTransactionSpans?, reader: LogReader,
        to output: MigrationOutput?, validation: inout MigrationValidation?
    ) throws -> (StateDigest, UInt64) {
        let objectCount = windows.reduce(0) { $0 + $1.objectCount }
        var begin = CheckpointBegin(
            lastTransactionID: counters.lastTransactionID,
            lastCommitTimeMicroseconds: counters.lastCommitTimeMicroseconds, nextKey: counters.nextKey,
            objectCount: UInt64(objectCount))
        // The counters go on from where they were: a value handed out before is never handed out again.
        begin.sequenceReservations = counters.sequenceReservations
        try output?.beginCheckpoint(begin)
        var sum = DigestSum()
        var byteCount: UInt64 = 0
        var blobs: [BlobKey: (BlobReference, UInt64)] = [:]
        for window in windows where window.objectCount > 0 {
            let graph = try build(window, spans: spans, reader: reader)
            guard graph.objectCount == window.objectCount, let state = graph.state, let model = graph.model else {
                throw EventGraphError(
                    .log,
                    "\(path): a part of the live state holds \(graph.objectCount) objects where the migration "
                        + "counted \(window.objectCount); the store was not changed")
            }
            for entityIndex in model.entities.indices where window.ranges[entityIndex] != nil {
                state.addDigest(ofEntity: entityIndex, model: model, to: &sum)
            }
            validation?.check(graph)
            byteCount += try appendCheckpointChunks(of: graph, to: output)
            for (reference, location) in graph.referencedBlobs() {
                blobs[BlobKey(transactionID: reference.transactionID, index: reference.index)] =
                    (reference, location.byteOffset)
            }
        }
        let digest = sum.digest
        let ordered = blobs.sorted { ($0.key.transactionID, $0.key.index) < ($1.key.transactionID, $1.key.index) }
        byteCount += try endCheckpoint(
            begin: begin, digest: digest, blobs: ordered.map(\.value), reader: reader, to: output)
        return (digest, byteCount)
    }

    /// The state of one window's objects: the old log read again through fresh mappers (a custom stage's keeps
    /// state), keeping only the window's operations and checkpoint records.
    func build(_ window: MigrationWindow, spans: MigrationTransactionSpans?, reader: LogReader) throws
        -> LogGraph
    {
        let (_, mappings, steps) = try inferMappings()
        var mapper = RecordMapper.Chain(steps)
        var state = try MigrationState(schema: mappings.last!.targetSchema, window: window)
        var sawSchema = false
        try reader.scan { record in
            switch record {
            case .schema(let schema, _):
                if sawSchema { try mapper.adopt(schema) }
                sawSchema = true
            case .transaction(let transaction):
                guard spans?.mayTouch(transaction.transactionID, window) ?? true else { return }
                state.apply(try mapper.map(try transaction.changeset()), blobs: transaction.blobs)
            case .checkpointBegin, .checkpointBlob:
                try state.apply(checkpoint: record)
            case .checkpointChunk(let chunk, let offset):
                try state.apply(checkpoint: .checkpointChunk(try mapper.map(chunk), byteOffset: offset))
            case .checkpointEnd(_, let offset):
                let count = UInt64(state.objectCount)
                try state.apply(
                    checkpoint: .checkpointEnd(CheckpointEnd(objectCount: count, stateDigest: []), byteOffset: offset))
                state.merge(inverses: mapper.takeCheckpointInverses())
            case .dictionary, .seal, .extensionFrame, .checkpointDirectory:
                break
            }
        }
        return state.graph ?? LogGraph()
    }
}
