import LogFormat

/// What a migration keeps of the new state while it streams the old log: the keys of the live objects of each new
/// entity (to count them), and — only when something needs the values — the whole state as a ``LogGraph``.
///
/// A migration that keeps history needs no values: each mapped transaction goes to the new log as it is read, and
/// the new file is verified by its content (``MigrationOutput``), not by replaying it. The graph is built when the
/// values are needed: for a new uniqueness constraint, for a live-state migration (whose checkpoint is the state),
/// and from the first checkpoint of the old log on (the checkpoint is written again from the mapped state; it
/// replaces everything before it, so a graph started there is complete).
///
/// A live-state migration without a new uniqueness constraint builds no whole graph: its first pass keeps only the
/// live keys (through the old log's checkpoints too) and the state's counters (``metadata``), and each
/// ``MigrationWindow`` is then built by a pass of its own (``init(schema:window:)``), written and forgotten.
struct MigrationState {
    private(set) var graph: LogGraph?
    private let schema: SchemaPayload
    /// Per new entity, the keys of its live objects (while there is no graph).
    private var liveKeys: [Set<UInt64>]
    /// Whether the keys follow the old log's checkpoints (a checkpoint replaces the keys) instead of a graph
    /// starting there.
    private let keepsKeysThroughCheckpoints: Bool
    /// With ``keepsKeysThroughCheckpoints``: the state without its objects — the last transaction, its commit time,
    /// the next key, the counters — replayed by the engine from the same records with their objects left out.
    private(set) var metadata: LogGraph?
    /// The objects this state keeps (`nil`: all).
    private let window: MigrationWindow?

    init(schema: SchemaPayload, buildsGraph: Bool, keepsKeysThroughCheckpoints: Bool = false) throws {
        self.schema = schema
        liveKeys = Array(repeating: [], count: schema.entities.count)
        self.keepsKeysThroughCheckpoints = keepsKeysThroughCheckpoints && !buildsGraph
        window = nil
        if buildsGraph { try startGraph() }
        if self.keepsKeysThroughCheckpoints {
            var metadata = LogGraph()
            try metadata.apply(.schema(schema, byteOffset: 0))
            self.metadata = metadata
        }
    }

    /// The state of the objects of one window only (see ``MigrationWindow``).
    init(schema: SchemaPayload, window: MigrationWindow) throws {
        self.schema = schema
        liveKeys = []
        keepsKeysThroughCheckpoints = false
        self.window = window
        try startGraph()
    }

    private mutating func startGraph() throws {
        var graph = LogGraph()
        try graph.apply(.schema(schema, byteOffset: 0))
        self.graph = graph
        liveKeys = []
    }

    /// Applies a mapped transaction.
    mutating func apply(_ changeset: Changeset, blobs: [BlobLocation]) {
        if graph != nil {
            if let window {
                var kept = changeset
                kept.operations = changeset.operations.filter { window.contains($0.object) }
                graph!.apply(kept, blobs: blobs)
            } else {
                graph!.apply(changeset, blobs: blobs)
            }
            return
        }
        if metadata != nil {
            var counters = changeset
            counters.operations = []
            metadata!.apply(counters, blobs: [])
        }
        for operation in changeset.operations {
            switch operation {
            case .insert(let object, _) where object.storeIndex == 0 && Int(object.entityIndex) < liveKeys.count:
                liveKeys[Int(object.entityIndex)].insert(object.key)
            case .delete(let object) where object.storeIndex == 0 && Int(object.entityIndex) < liveKeys.count:
                liveKeys[Int(object.entityIndex)].remove(object.key)
            default:
                break
            }
        }
    }

    /// Applies a record of a checkpoint (begin, mapped chunk, blob, end); the first begin starts the graph.
    mutating func apply(checkpoint record: LogRecord) throws {
        if keepsKeysThroughCheckpoints {
            switch record {
            case .checkpointBegin(var begin, let offset):
                for index in liveKeys.indices { liveKeys[index] = [] }
                begin.objectCount = 0
                try metadata?.apply(.checkpointBegin(begin, byteOffset: offset))
            case .checkpointChunk(let chunk, _):
                for record in chunk.records
                where record.object.storeIndex == 0 && Int(record.object.entityIndex) < liveKeys.count {
                    liveKeys[Int(record.object.entityIndex)].insert(record.object.key)
                }
            case .checkpointEnd(_, let offset):
                try metadata?.apply(.checkpointEnd(CheckpointEnd(objectCount: 0, stateDigest: []), byteOffset: offset))
            default:
                break
            }
            return
        }
        if graph == nil, case .checkpointBegin = record { try startGraph() }
        if let window, case .checkpointChunk(var chunk, let offset) = record {
            chunk.records = chunk.records.filter { window.contains($0.object) }
            try graph?.apply(.checkpointChunk(chunk, byteOffset: offset))
            return
        }
        try graph?.apply(record)
    }

    /// Adds to the state just read from a checkpoint the inverse values a custom stage's code put on objects whose
    /// records did not carry them (see ``RecordMapper/Chain/takeCheckpointInverses()``): a to-many value's objects
    /// join the list, a to-one value is set.
    mutating func merge(inverses records: [ObjectRecord]) {
        guard !records.isEmpty, let current = graph, var state = current.state, let model = current.model else {
            return
        }
        graph = nil
        for record in records where window?.contains(record.object) ?? true {
            let entityIndex = Int(record.object.entityIndex)
            guard record.object.storeIndex == 0, entityIndex < model.entities.count,
                let row = state.row(entityIndex: entityIndex, key: record.object.key)
            else { continue }
            var values = row.values.array
            for change in record.properties where Int(change.propertyIndex) < values.count {
                let index = Int(change.propertyIndex)
                if case .toMany(let added) = change.value, case .toMany(let existing) = values[index] {
                    let present = Set(existing)
                    values[index] = .toMany(existing + added.filter { !present.contains($0) })
                } else {
                    values[index] = change.value
                }
            }
            state.put(Row(entityIndex: entityIndex, key: row.key, version: row.version, values: values))
        }
        graph = LogGraph(model: model, state: state)
    }

    /// The live objects so far (while a checkpoint is read, those it holds so far).
    var objectCount: Int { graph?.objectCount ?? liveKeys.reduce(0) { $0 + $1.count } }

    /// The windows of at most `maxObjectCount` live objects that together hold the state, in (entity name, key)
    /// order (from the live keys; with a graph, one window of everything is not what this is for).
    func windows(maxObjectCount: Int, model: ObjectModel) -> [MigrationWindow] {
        let sortedKeys = liveKeys.map { $0.sorted() }
        return MigrationWindow.windows(
            sortedKeys: sortedKeys,
            order: model.entities.indices.sorted { model.entities[$0].name < model.entities[$1].name },
            maxObjectCount: maxObjectCount)
    }

    /// Live objects per entity of `model` (the new model; every entity named, with 0 when it has none).
    func objectCounts(model: ObjectModel) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entity in model.entities {
            // The graph's tables count their live objects; no row is built to count them.
            counts[entity.name] =
                graph?.state.map { entity.index < $0.tables.count ? $0.tables[entity.index].count : 0 }
                ?? (liveKeys.isEmpty ? 0 : liveKeys[entity.index].count)
        }
        return counts
    }
}
