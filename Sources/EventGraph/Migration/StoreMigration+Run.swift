import Foundation
import LogFormat

/// One migration (or dry run) of one store: the stages of ``StoreMigration/migrate(path:to:options:)``.
struct MigrationRun {
    let path: String
    /// The target model, or the versions of a plan (oldest first; the last is the target).
    let versions: [ObjectModel]
    /// A plan's stages (`versions[i]` → `versions[i + 1]`); empty when the run infers from the store's model to
    /// its one version.
    var stages: [MigrationStage] = []
    var model: ObjectModel { versions.last! }
    let options: StoreMigration.Options
    let isDryRun: Bool
    /// Live objects per checkpoint chunk written.
    static let checkpointChunkObjectCount = 512
    /// Live objects per window of a live-state migration (see ``MigrationWindow``): the most it holds at once.
    static let liveStateWindowObjectCount = 1 << 18

    init(path: String, versions: [ObjectModel], options: StoreMigration.Options, isDryRun: Bool) {
        self.path = path
        self.versions = versions
        self.options = options
        self.isDryRun = isDryRun
    }

    init(path: String, plan: MigrationPlan, options: StoreMigration.Options, isDryRun: Bool) {
        self.init(path: path, versions: plan.models, options: options, isDryRun: isDryRun)
        stages = plan.stages
    }

    mutating func execute() throws -> StoreMigration.Report {
        let (recorded, mappings, steps) = try inferMappings()
        var report = StoreMigration.Report(
            sourceModel: "\(recorded.modelName) version \(recorded.versionIdentifier)",
            targetModel: "\(model.name) version \(model.versionIdentifier)", changes: mappings.flatMap(\.changes),
            isUpToDate: mappings.allSatisfy(\.isIdentity), isDryRun: isDryRun, transactionCount: 0,
            affectedTransactionCount: 0, objectCounts: [:], uniquenessFailures: [], sourceByteCount: 0,
            targetByteCount: 0)
        // Validation rules are not part of the shape: a dry run checks them in a store already at the shape too
        // (it opens with the new model without a migration).
        if report.isUpToDate, !(isDryRun && MigrationValidation.hasRules(model)) { return report }
        if isDryRun {
            var ledger = CrossStoreLedger()
            try replay(mappings, steps, into: nil, &report, ledger: &ledger)
            return report
        }
        var writerOptions = LogWriter.Options(durability: .full, createIfMissing: false)
        writerOptions.faultInjector = options.faultInjector
        // The writer holds the store's lock for the whole migration (a second process is refused) and recovers a
        // torn tail first; its damage report, if synced data is damaged, refuses the migration.
        let writer = try LogWriter(path: path, options: writerOptions)
        let output: MigrationOutput
        do {
            output = MigrationOutput(try writer.beginReplacement(), replacingPayloads: options.replacePayload)
        } catch {
            try? writer.close()
            throw error
        }
        var ledger = CrossStoreLedger()
        do {
            try replay(mappings, steps, into: output, &report, ledger: &ledger)
            try output.finish()
            try output.verify(storePath: path)
            let backup = StoreMigration.backupPath(for: path)
            try writer.replace(with: output.path, keepingPreviousAt: backup)
            report.backupPath = backup
        } catch {
            output.discard()
            // A seal after an undecided part of a save across stores would decide it as committed.
            if ledger.undecided != nil { writer.poison(because: "\(error)") }
            try? writer.close()
            throw error
        }
        return report
    }

    /// The mappings from the recorded model through the versions after it (inferred, or a custom stage's over
    /// inference) and the mapper steps that run them, refusing a downgrade to an older model version.
    func inferMappings() throws -> (SchemaPayload, [MigrationMapping], [RecordMapper.Chain.Step]) {
        guard let recorded = try StoreMigration.recordedSchema(path: path) else {
            throw EventGraphError(.modelMismatch, "\(path) records no model yet; there is nothing to migrate")
        }
        let sameShape = ModelShape.hash(of: recorded.entities) == model.hash
        if !sameShape, StoreMigration.isNewer(recorded.versionIdentifier, than: model.versionIdentifier) {
            let backup = StoreMigration.backupPath(for: path)
            let hint =
                FileManager.default.fileExists(atPath: backup)
                ? "a backup of the store before its migration is at \(backup): roll back (egctl migrate --rollback) "
                    + "to use it with this model"
                : "no backup of an older version exists, so it cannot be opened with this model"
            throw EventGraphError(
                .modelMismatch,
                "\(path) was written with \(recorded.modelName) version \(recorded.versionIdentifier), newer than "
                    + "this app's version \(model.versionIdentifier); \(hint)")
        }
        guard versions.count > 1 else {
            let mapping = try MigrationMapping.inferred(from: recorded, to: model)
            return (recorded, [mapping], [.inferred(RecordMapper(mapping: mapping))])
        }
        guard let start = versions.lastIndex(where: { $0.hash == ModelShape.hash(of: recorded.entities) }) else {
            throw EventGraphError(
                .modelMismatch,
                "\(path) was written with \(recorded.modelName) version \(recorded.versionIdentifier), whose shape is "
                    + "none of the plan's versions (\(versions.map(\.versionIdentifier).joined(separator: ", ")))")
        }
        var mappings: [MigrationMapping] = []
        var steps: [RecordMapper.Chain.Step] = []
        var source = recorded
        for index in (start + 1)..<versions.count {
            let stage = stages.isEmpty ? MigrationStage.inferred(to: versions[index]) : stages[index - 1]
            let computed = Dictionary(
                stage.entityMigrations.map { ($0.entityName, $0.computedPropertyNames) },
                uniquingKeysWith: { $0.union($1) })
            let mapping = try MigrationMapping.inferred(from: source, to: versions[index], computed: computed)
            mappings.append(mapping)
            steps.append(
                stage.entityMigrations.isEmpty
                    ? .inferred(RecordMapper(mapping: mapping))
                    : .custom(CustomStageMapper(mapping: mapping, stage: stage)))
            source = versions[index].schema
        }
        return (recorded, mappings, steps)
    }

    /// Streams the old log through the mapping: each transaction is read, mapped and (unless this is a dry run or
    /// a live-state migration) written to the new log as it goes. The new state is kept as a whole only when
    /// something needs its values (see ``MigrationState``).
    private func replay(
        _ mappings: [MigrationMapping], _ steps: [RecordMapper.Chain.Step], into output: MigrationOutput?,
        _ report: inout StoreMigration.Report, ledger: inout CrossStoreLedger
    ) throws {
        let keepsHistory = options.historyMode == .full
        let mapping = mappings.last!
        var mapper = RecordMapper.Chain(steps)
        let checked = Self.constraintsToCheck(report.changes, model: model)
        // A live-state migration builds its state in windows after this pass, unless a new uniqueness constraint
        // needs the whole state at once.
        let windowed = !keepsHistory && checked.isEmpty
        let needsState = !checked.isEmpty || (keepsHistory && options.computesStateDigest)
        var state = try MigrationState(
            schema: mapping.targetSchema, buildsGraph: needsState, keepsKeysThroughCheckpoints: windowed)
        let isInferenceOnly = steps.allSatisfy { if case .inferred = $0 { true } else { false } }
        // A dry run checks the new model's validation rules in the final state: on the stream of records when every
        // rule that can fail is an attribute's, otherwise in windows (like a live-state migration's) unless it builds
        // the whole state anyway.
        let validates = isDryRun && MigrationValidation.hasRules(model)
        let validatesInWindows = validates && !needsState && !windowed && MigrationValidation.needsState(model)
        let buildsWindows = windowed || validatesInWindows || (validates && keepsHistory && !needsState)
        var spans: MigrationTransactionSpans? = buildsWindows && isInferenceOnly ? MigrationTransactionSpans() : nil
        if keepsHistory { try output?.append(schema: mapping.targetSchema) }
        let reader = try LogReader(path: path)
        var validation =
            validates
            ? MigrationValidation(
                model: model, storeUUID: reader.header.storeUUID, tracksRecords: keepsHistory && !needsState)
            : nil
        let fileByteCount = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64) ?? 0
        var sawSchema = false
        var checkpoint: CheckpointBegin?
        var checkpointBlobs: [BlobLocation] = []
        let scan = try reader.scan { record in
            // A transaction is decoded once, for the ledger and the mapping.
            var decoded: Changeset?
            if case .transaction(let transaction) = record { decoded = try transaction.changeset() }
            ledger.note(record, changeset: decoded)
            switch record {
            case .schema(let schema, _):
                if sawSchema { try mapper.adopt(schema) }
                sawSchema = true
            case .transaction(let transaction):
                let changeset = decoded!
                let mapped = try mapper.map(changeset)
                spans?.note(mapped, entityCount: mapping.targetSchema.entities.count)
                report.transactionCount += 1
                let isChanged = mapped.operations != changeset.operations
                if isChanged { report.affectedTransactionCount += 1 }
                state.apply(mapped, blobs: transaction.blobs)
                validation?.track(mapped)
                if keepsHistory {
                    // A transaction the mapping leaves unchanged keeps its payload bytes (they decode to the same
                    // changeset), so it is not encoded again.
                    let payload = isChanged ? try mapped.encoded() : nil
                    report.targetByteCount += UInt64(payload?.count ?? transaction.payloadByteCount)
                    report.targetByteCount += transaction.blobs.reduce(0) { $0 + UInt64($1.byteCount) }
                    if let output {
                        let blobs = try transaction.blobs.map { try reader.readBlob(at: $0.byteOffset) }
                        try output.appendTransaction(
                            id: changeset.transactionID, payload: payload ?? transaction.payload, blobs: blobs)
                    }
                }
                options.progress?(
                    StoreMigration.Progress(
                        byteOffset: transaction.byteOffset, byteCount: fileByteCount,
                        transactionCount: report.transactionCount))
            case .checkpointBegin(let begin, _):
                try state.apply(checkpoint: record)
                validation?.trackCheckpointBegin()
                spans?.checkpointTransactionID = begin.lastTransactionID
                checkpoint = begin
                checkpointBlobs = []
            case .checkpointChunk(let chunk, let offset):
                let mapped = try mapper.map(chunk)
                try state.apply(checkpoint: .checkpointChunk(mapped, byteOffset: offset))
                validation?.track(mapped)
            case .checkpointBlob(let location):
                try state.apply(checkpoint: record)
                checkpointBlobs.append(location)
            case .checkpointEnd(_, let offset):
                let count = UInt64(state.objectCount)
                try state.apply(
                    checkpoint: .checkpointEnd(CheckpointEnd(objectCount: count, stateDigest: []), byteOffset: offset))
                state.merge(inverses: mapper.takeCheckpointInverses())
                if keepsHistory, let begin = checkpoint, let graph = state.graph {
                    var mappedBegin = begin
                    mappedBegin.objectCount = count
                    let blobs = checkpointBlobs.map { (BlobReference(location: $0), $0.byteOffset) }
                    report.targetByteCount += try writeCheckpoint(
                        of: graph, digest: graph.digest(), begin: mappedBegin, blobs: blobs, reader: reader,
                        to: output)
                }
            case .dictionary, .seal, .extensionFrame, .checkpointDirectory:
                // This scan reads entity chunks as ordinary chunks (above); their directory is not needed.
                break
            }
        }
        if case .damaged(let damage) = scan.tail {
            throw EventGraphError(
                .log,
                "\(path): \(damage.summary); a damaged log cannot be migrated: salvage it first (egctl salvage)")
        }
        if let last = ledger.undecided {
            // Migrating would seal the new log after the part (deciding it as committed) or, keeping only the live
            // state, drop its record; only the stores opened together may decide it.
            throw CrossStoreRecovery.undecidedMigrationError(path: path, last)
        }
        if !keepsHistory, !ledger.lastShared.isEmpty {
            throw CrossStoreParts.liveStateMigrationError(path: path)
        }
        report.sourceByteCount = scan.committedByteCount
        if let graph = state.graph {
            report.uniquenessFailures = Self.uniquenessFailures(in: graph, model: model, checking: checked)
        }
        report.objectCounts = state.objectCounts(model: model)
        if !report.uniquenessFailures.isEmpty, !isDryRun {
            throw EventGraphError(
                .uniqueness,
                "\(path): objects share values under a uniqueness constraint of \(model.name) version "
                    + "\(model.versionIdentifier); the store was not changed", failures: report.uniquenessFailures)
        }
        // The state's digest, when the state was built (computed once: a live-state checkpoint records it too).
        report.stateDigest = state.graph?.digest()
        if let graph = state.graph { validation?.check(graph) }
        let windowObjectCount = options.windowObjectCount ?? Self.liveStateWindowObjectCount
        if windowed {
            try output?.append(schema: mapping.targetSchema)
            let windows = state.windows(maxObjectCount: windowObjectCount, model: model)
            let (digest, byteCount) = try writeLiveState(
                in: windows, counters: state.metadata ?? LogGraph(), spans: spans, reader: reader, to: output,
                validation: &validation)
            report.stateDigest = digest
            report.targetByteCount = byteCount
        } else if !keepsHistory, let graph = state.graph, let digest = report.stateDigest {
            var begin = CheckpointBegin(
                lastTransactionID: graph.lastTransactionID,
                lastCommitTimeMicroseconds: graph.lastCommitTimeMicroseconds,
                nextKey: graph.nextKey, objectCount: UInt64(graph.objectCount))
            // The counters go on from where they were: a value handed out before is never handed out again.
            begin.sequenceReservations = graph.sequenceReservations
            try output?.append(schema: mapping.targetSchema)
            let blobs = graph.referencedBlobs().map { ($0.0, $0.1.byteOffset) }
            report.targetByteCount = try writeCheckpoint(
                of: graph, digest: digest, begin: begin, blobs: blobs, reader: reader, to: output)
        }
        // A dry run's check of a state it did not build (a built one, and the windows above, were checked).
        if !windowed, state.graph == nil, var check = validation {
            try validate(unbuilt: state, with: &check, inWindows: validatesInWindows, spans: spans, reader: reader)
            validation = check
        }
        report.validationFailures = validation?.failures ?? []
    }

    /// Writes the live state of `graph`, whose digest is `digest`, as a checkpoint (or, with no output, only
    /// measures it); returns the bytes of its chunks and blobs.
    private func writeCheckpoint(
        of graph: LogGraph, digest: StateDigest, begin: CheckpointBegin, blobs: [(BlobReference, UInt64)],
        reader: LogReader, to output: MigrationOutput?
    ) throws -> UInt64 {
        try output?.beginCheckpoint(begin)
        let byteCount = try appendCheckpointChunks(of: graph, to: output)
        return try byteCount
            + endCheckpoint(begin: begin, digest: digest, blobs: blobs, reader: reader, to: output)
    }

    /// Appends the live objects of `graph` as checkpoint chunks (or, with no output, only measures them); returns
    /// the bytes of their payloads.
    func appendCheckpointChunks(of graph: LogGraph, to output: MigrationOutput?) throws -> UInt64 {
        var byteCount: UInt64 = 0
        try graph.forEachCheckpointChunk(recordsPerChunk: Self.checkpointChunkObjectCount) { chunk in
            byteCount += UInt64(try output?.appendCheckpointChunk(chunk) ?? chunk.encoded().count)
        }
        return byteCount
    }

    /// Appends a checkpoint's external values (read from the old log at their offsets) and its end; returns the
    /// bytes of the values.
    func endCheckpoint(
        begin: CheckpointBegin, digest: StateDigest, blobs: [(BlobReference, UInt64)], reader: LogReader,
        to output: MigrationOutput?
    ) throws -> UInt64 {
        var byteCount: UInt64 = 0
        for (reference, offset) in blobs {
            byteCount += reference.byteCount
            if let output { try output.appendCheckpointBlob(reference, bytes: try reader.readBlob(at: offset)) }
        }
        let end = CheckpointEnd(objectCount: begin.objectCount, stateDigest: digest.checkpointBytes)
        try output?.endCheckpoint(end, lastTransactionID: begin.lastTransactionID)
        return byteCount
    }
}

extension BlobReference {
    /// The reference a blob frame at `location` satisfies.
    init(location: BlobLocation) {
        self.init(transactionID: location.transactionID, index: location.index, byteCount: UInt64(location.byteCount))
    }
}
