import LogFormat
import Synchronization

/// Where a store reads the entity chunks of its checkpoint from (format 1.3, `Docs/FileFormat-Checkpoints.md`): the
/// log file as it was when the store opened it. The reader holds that file open, so a compaction that renames a new
/// file over the path later does not move the chunks a version of the state still has to load.
struct CheckpointChunkSource: Sendable {
    let reader: LogReader
    /// The checkpoint's last transaction, which every one of its entity chunks carries.
    let checkpointTransactionID: UInt64

    /// Reads, verifies and decodes chunk `chunkIndex` of an entity (`pread`; safe from any thread).
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the entity, the chunk and its byte offset when the
    ///   chunk is damaged or cannot be read. The LogFormat error is not attached as the underlying one on purpose:
    ///   a damaged *frame* makes the container advise a read-only view up to the damage, which a damaged chunk of
    ///   the checkpoint the view would start from cannot offer yet.
    func load(_ entry: EntityChunkEntry, chunkIndex: Int, entityIndex: Int, entityName: String)
        throws(EventGraphError) -> CheckpointChunk
    {
        do {
            return try reader.readEntityChunk(
                entry, entityIndex: UInt32(entityIndex), checkpointTransactionID: checkpointTransactionID)
        } catch {
            throw damage(entry, chunkIndex: chunkIndex, entityName: entityName, error.message)
        }
    }

    /// The error of a chunk that cannot be used: names the file, the entity, the chunk and its byte offset.
    func damage(_ entry: EntityChunkEntry, chunkIndex: Int, entityName: String, _ reason: String) -> EventGraphError {
        EventGraphError(
            .log,
            "\(reader.path): chunk \(chunkIndex) of entity \(entityName) (byte offset \(entry.byteOffset)) in the "
                + "checkpoint at transaction \(checkpointTransactionID) cannot be loaded: \(reason)")
    }
}

/// What turns one entity chunk's records into a column chunk: the source, the entity, the defaults of the schema in
/// force when the checkpoint was read, and the state's table of foreign stores at that point.
struct CheckpointChunkDecoder: Sendable {
    let source: CheckpointChunkSource
    let entityIndex: Int
    let entityName: String
    /// The value of each property a record leaves out (the recorded schema's defaults).
    let defaults: [PropertyValue]
    /// The state's foreign stores when the directory was read: a chunk's references are re-expressed in it.
    let foreignStores: [LogUUID]

    /// Reads, verifies and decodes one chunk into a column chunk whose slot *i* holds the chunk's record *i*.
    func columnChunk(_ entry: EntityChunkEntry, chunkIndex: Int) throws(EventGraphError) -> ColumnChunk {
        let chunk = try source.load(entry, chunkIndex: chunkIndex, entityIndex: entityIndex, entityName: entityName)
        func damage(_ reason: String) -> EventGraphError {
            source.damage(entry, chunkIndex: chunkIndex, entityName: entityName, reason)
        }
        // A chunk's own table of foreign stores is re-expressed in the state's (every chunk of a checkpoint carries
        // the writer's one table, which the state interned when the directory was read).
        var storeMap: [UInt32] = []
        for uuid in chunk.foreignStores {
            guard let index = foreignStores.firstIndex(of: uuid) else {
                throw damage("it references store \(uuid), which the checkpoint's first chunk does not list")
            }
            storeMap.append(UInt32(index + 1))
        }
        var column = ColumnChunk()
        // Each column's strings are put in its arena in one allocation, not by doubling along the way. Only the
        // values the records carry are counted (bytes already decoded, so the reservation is bounded by them); a
        // default repeated for every record (from the schema frame, a number read from the file) is not multiplied.
        var arenaByteCounts = [Int](repeating: 0, count: defaults.count)
        for record in chunk.records {
            for change in record.properties where Int(change.propertyIndex) < arenaByteCounts.count {
                if case .attribute(let attribute) = change.value {
                    arenaByteCounts[Int(change.propertyIndex)] += attribute.arenaByteCount
                }
            }
        }
        column.reserveCapacity(slotCount: chunk.records.count, arenaByteCounts: arenaByteCounts)
        let version = source.checkpointTransactionID
        for record in chunk.records {
            var values = defaults
            for change in record.properties {
                let property = Int(change.propertyIndex)
                guard property < values.count else {
                    throw damage("object \(record.object.key) sets property #\(property), which \(entityName) lacks")
                }
                values[property] = storeMap.isEmpty ? change.value : StoreState.localize(change, storeMap).value
            }
            _ = column.append(key: record.object.key, version: version, values: values)
        }
        return column
    }
}

/// One entity chunk of a checkpoint that stays on disk until something touches it, then is read, verified and
/// decoded once: the box is shared by every version of the state that has not changed the chunk.
///
/// Its keys (sorted, with their positions) are kept beside the decoded chunk, so that a version finds a key in an
/// unchanged chunk without a key directory entry per object.
final class LazyColumnChunk: Sendable {
    let entry: EntityChunkEntry
    let chunkIndex: Int
    private let decoder: CheckpointChunkDecoder
    private let loaded = Mutex<Loaded?>(nil)

    /// A decoded chunk and its keys in ascending order with their positions (or why it cannot be decoded).
    struct Loaded: Sendable {
        var chunk: Result<ColumnChunk, EventGraphError>
        var sortedKeys: [(key: UInt64, position: Int)]
    }

    init(entry: EntityChunkEntry, chunkIndex: Int, decoder: CheckpointChunkDecoder) {
        self.entry = entry
        self.chunkIndex = chunkIndex
        self.decoder = decoder
    }

    /// The number of objects the directory says it holds (all live: a checkpoint holds live objects only).
    var objectCount: Int { Int(entry.objectCount) }

    /// Whether its directory entry allows it to hold `key`.
    @inline(__always)
    func mayHold(_ key: UInt64) -> Bool { key >= entry.minKey && key <= entry.maxKey }

    /// Whether it has been read (successfully or not).
    var isLoaded: Bool { loaded.withLock { $0 != nil } }

    /// The decoded chunk: read and decoded on the first call (under the box's own lock, never the store's), the
    /// same value (or error) afterwards.
    func load() throws(EventGraphError) -> ColumnChunk {
        try loadedState().chunk.get()
    }

    /// The position of `key` in the chunk, if it holds it (loads the chunk; `nil` when it cannot be loaded).
    func position(of key: UInt64) -> Int? {
        guard mayHold(key) else { return nil }
        let keys = loadedState().sortedKeys
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low].key == key ? keys[low].position : nil
    }

    private func loadedState() -> Loaded {
        loaded.withLock { state in
            if let state { return state }
            let result = Result { () throws(EventGraphError) -> ColumnChunk in
                try decoder.columnChunk(entry, chunkIndex: chunkIndex)
            }
            var keys: [(key: UInt64, position: Int)] = []
            if case .success(let chunk) = result {
                keys = chunk.keys.enumerated().map { (key: $0.element, position: $0.offset) }
                keys.sort { $0.key < $1.key }
            }
            state = Loaded(chunk: result, sortedKeys: keys)
            return state!
        }
    }
}
