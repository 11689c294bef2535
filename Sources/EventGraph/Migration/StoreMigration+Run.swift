import Foundation
import LogFormat

/// The new log being written, held by reference so the replay can write to it or, in a dry run, not.
private final class NewLog {
    var log: ReplacementLog
    init(_ log: consuming ReplacementLog) { self.log = log }
}

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
        if report.isUpToDate { return report }
        if isDryRun {
            try replay(mappings, steps, into: nil, &report)
            return report
        }
        var writerOptions = LogWriter.Options(durability: .full, createIfMissing: false)
        writerOptions.faultInjector = options.faultInjector
        // The writer holds the store's lock for the whole migration (a second process is refused) and recovers a
        // torn tail first; its damage report, if synced data is damaged, refuses the migration.
        let writer = try LogWriter(path: path, options: writerOptions)
        let output: NewLog
        do {
            output = NewLog(try writer.beginReplacement())
        } catch {
            try? writer.close()
            throw error
        }
        do {
            try replay(mappings, steps, into: output, &report)
            try output.log.finish()
            try verify(output.log.path, against: report)
            let backup = StoreMigration.backupPath(for: path)
            try writer.replace(with: output.log.path, keepingPreviousAt: backup)
            report.backupPath = backup
        } catch {
            output.log.discard()
            try? writer.close()
            throw error
        }
        return report
    }

    /// The mappings from the recorded model through the versions after it (inferred, or a custom stage's over
    /// inference) and the mapper steps that run them, refusing a downgrade to an older model version.
    private func inferMappings() throws -> (SchemaPayload, [MigrationMapping], [RecordMapper.Chain.Step]) {
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

    /// Streams the old log through the mapping into a graph of the new state and, unless this is a dry run or a
    /// live-state migration, into the new log as it goes.
    private func replay(
        _ mappings: [MigrationMapping], _ steps: [RecordMapper.Chain.Step], into output: NewLog?,
        _ report: inout StoreMigration.Report
    ) throws {
        let keepsHistory = options.historyMode == .full
        let mapping = mappings.last!
        var mapper = RecordMapper.Chain(steps)
        var graph = LogGraph()
        try graph.apply(.schema(mapping.targetSchema, byteOffset: 0))
        if keepsHistory { try output?.log.append(schema: mapping.targetSchema) }
        let reader = try LogReader(path: path)
        let fileByteCount = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64) ?? 0
        var sawSchema = false
        var checkpoint: CheckpointBegin?
        var checkpointBlobs: [BlobLocation] = []
        let scan = try reader.scan { record in
            switch record {
            case .schema(let schema, _):
                if sawSchema { try mapper.adopt(schema) }
                sawSchema = true
            case .transaction(let transaction):
                let changeset = try transaction.changeset()
                let mapped = try mapper.map(changeset)
                report.transactionCount += 1
                let isChanged = mapped.operations != changeset.operations
                if isChanged { report.affectedTransactionCount += 1 }
                graph.apply(mapped, blobs: transaction.blobs)
                if keepsHistory {
                    // A transaction the mapping leaves unchanged keeps its payload bytes (they decode to the same
                    // changeset), so it is not encoded again; the verification replays the new log either way.
                    let payload = isChanged ? try mapped.encoded() : nil
                    report.targetByteCount += UInt64(payload?.count ?? transaction.payloadByteCount)
                    report.targetByteCount += transaction.blobs.reduce(0) { $0 + UInt64($1.byteCount) }
                    if let output {
                        let blobs = try transaction.blobs.map { try reader.readBlob(at: $0.byteOffset) }
                        try output.log.appendTransaction(
                            id: changeset.transactionID, payload: payload ?? transaction.payload, blobs: blobs)
                    }
                }
                options.progress?(
                    StoreMigration.Progress(
                        byteOffset: transaction.byteOffset, byteCount: fileByteCount,
                        transactionCount: report.transactionCount))
            case .checkpointBegin(let begin, _):
                try graph.apply(record)
                checkpoint = begin
                checkpointBlobs = []
            case .checkpointChunk(let chunk, let offset):
                try graph.apply(.checkpointChunk(try mapper.map(chunk), byteOffset: offset))
            case .checkpointBlob(let location):
                try graph.apply(record)
                checkpointBlobs.append(location)
            case .checkpointEnd(_, let offset):
                let count = UInt64(graph.objectCount)
                try graph.apply(.checkpointEnd(CheckpointEnd(objectCount: count, stateDigest: []), byteOffset: offset))
                if keepsHistory, let begin = checkpoint {
                    var mappedBegin = begin
                    mappedBegin.objectCount = count
                    let blobs = checkpointBlobs.map { (BlobReference(location: $0), $0.byteOffset) }
                    try writeCheckpoint(of: graph, begin: mappedBegin, blobs: blobs, reader: reader, to: output)
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
        report.sourceByteCount = scan.committedByteCount
        report.uniquenessFailures = Self.uniquenessFailures(
            in: graph, model: model, checking: Self.constraintsToCheck(report.changes, model: model))
        for entity in model.entities { report.objectCounts[entity.name] = 0 }
        for object in graph.objectReferences {
            report.objectCounts[model.entities[Int(object.entityIndex)].name, default: 0] += 1
        }
        if !report.uniquenessFailures.isEmpty, !isDryRun {
            throw EventGraphError(
                .uniqueness,
                "\(path): objects share values under a uniqueness constraint of \(model.name) version "
                    + "\(model.versionIdentifier); the store was not changed", failures: report.uniquenessFailures)
        }
        if !keepsHistory {
            let begin = CheckpointBegin(
                lastTransactionID: graph.lastTransactionID,
                lastCommitTimeMicroseconds: graph.lastCommitTimeMicroseconds,
                nextKey: graph.nextKey, objectCount: UInt64(graph.objectCount))
            try output?.log.append(schema: mapping.targetSchema)
            let blobs = graph.referencedBlobs().map { ($0.0, $0.1.byteOffset) }
            report.targetByteCount = try writeCheckpoint(
                of: graph, begin: begin, blobs: blobs, reader: reader, to: output)
        }
        report.stateDigest = graph.digest()
    }

    /// Writes the live state of `graph` as a checkpoint (or, with no output, only measures it).
    @discardableResult
    private func writeCheckpoint(
        of graph: LogGraph, begin: CheckpointBegin, blobs: [(BlobReference, UInt64)], reader: LogReader,
        to output: NewLog?
    ) throws -> UInt64 {
        var byteCount: UInt64 = 0
        try output?.log.beginCheckpoint(begin)
        try graph.forEachCheckpointChunk(recordsPerChunk: Self.checkpointChunkObjectCount) { chunk in
            let bytes = try chunk.encoded()
            byteCount += UInt64(bytes.count)
            try output?.log.appendCheckpointChunk(chunk)
        }
        for (reference, offset) in blobs {
            byteCount += reference.byteCount
            if let output { try output.log.appendCheckpointBlob(reference, bytes: try reader.readBlob(at: offset)) }
        }
        let end = CheckpointEnd(objectCount: begin.objectCount, stateDigest: graph.digest().bytes)
        try output?.log.endCheckpoint(end, lastTransactionID: begin.lastTransactionID)
        return byteCount
    }

    /// Re-reads the new log completely: it must end cleanly with a seal and replay to the mapped old state.
    private func verify(_ newPath: String, against report: StoreMigration.Report) throws {
        var check = LogGraph()
        let scan = try LogReader(path: newPath).scan { record in try check.apply(record) }
        guard scan.tail == .clean, scan.endsWithSeal, check.digest() == report.stateDigest else {
            throw EventGraphError(
                .log,
                "\(path): the migrated log does not verify (state digest \(check.digest()) instead of "
                    + "\(report.stateDigest.map { "\($0)" } ?? "none"), tail \(scan.tail)); the store was not changed")
        }
    }

    /// Objects of the new state that share values under one of the new model's uniqueness constraints.
    /// The uniqueness constraints the old store did not already enforce: those a step added, or every one when an
    /// entity changed its parent (its objects join another family's constraints). Keyed by declaring entity index
    /// and ordinal.
    static func constraintsToCheck(_ changes: [MigrationChange], model: ObjectModel) -> Set<[Int]> {
        let everything = changes.contains { $0.kind == .entityParentChanged }
        var checked: Set<[Int]> = []
        for entity in model.entities {
            for (ordinal, names) in entity.uniquenessConstraints.enumerated() {
                let key = names.sorted().joined(separator: ",")
                let added = changes.contains {
                    $0.kind == .uniquenessConstraintAdded && $0.entityName == entity.name && $0.propertyName == key
                }
                if everything || added { checked.insert([entity.index, ordinal]) }
            }
        }
        return checked
    }

    static func uniquenessFailures(in graph: LogGraph, model: ObjectModel, checking checked: Set<[Int]>)
        -> [EventGraphError.Failure]
    {
        guard !checked.isEmpty else { return [] }
        var holders: [UniqueKey: [ObjectReference]] = [:]
        for object in graph.objectReferences {
            let entity = model.entities[Int(object.entityIndex)]
            let constraints = entity.uniqueConstraints.filter { checked.contains([$0.entityIndex, $0.ordinal]) }
            guard !constraints.isEmpty else { continue }
            let values = entity.properties.indices.map { graph.value(of: object, property: $0) ?? .attribute(.null) }
            for constraint in constraints {
                if let key = UniqueKey(constraint, values: values) { holders[key, default: []].append(object) }
            }
        }
        var failures: [EventGraphError.Failure] = []
        for (key, objects) in holders where objects.count > 1 {
            let declaring = model.entities[key.entityIndex]
            let names = declaring.uniquenessConstraints[key.ordinal]
            let keys = objects.map(\.key).sorted().map(String.init).joined(separator: ", ")
            let shared = zip(names, key.values).map { "\($0) = \(Self.text(of: $1))" }.joined(separator: ", ")
            failures.append(
                EventGraphError.Failure(
                    entityName: declaring.name, objectID: nil, propertyName: names.joined(separator: ","),
                    message: "\(objects.count) objects (keys \(keys)) share \(shared)"))
        }
        return failures.sorted { $0.message < $1.message }
    }

    /// A value as a failure message shows it: strings quoted, numbers plain.
    private static func text(of value: AttributeValue) -> String {
        switch value {
        case .string(let text), .url(let text), .decimal(let text): "\"\(text)\""
        case .int16(let number): "\(number)"
        case .int32(let number): "\(number)"
        case .int64(let number): "\(number)"
        case .double(let number): "\(number)"
        case .float(let number): "\(number)"
        case .bool(let flag): "\(flag)"
        default: "\(value)"
        }
    }
}

extension BlobReference {
    /// The reference a blob frame at `location` satisfies.
    init(location: BlobLocation) {
        self.init(transactionID: location.transactionID, index: location.index, byteCount: UInt64(location.byteCount))
    }
}
