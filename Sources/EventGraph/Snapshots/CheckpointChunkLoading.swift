import LogFormat

/// Where a store reads the entity chunks of its checkpoint from (format 1.3, `Docs/FileFormat-Checkpoints.md`): the
/// log file as it was when the store opened it. The reader holds that file open, so a compaction that renames a new
/// file over the path later does not move the chunks a version of the state still has to load.
struct CheckpointChunkSource: Sendable {
    let reader: LogReader
    /// The checkpoint's last transaction, which every one of its entity chunks carries.
    let checkpointTransactionID: UInt64
    /// The budget of decoded chunks their boxes share (``LazyColumnChunk``).
    var cache = DecodedChunkCache(byteBudget: Int.max)

    /// Reads, verifies and decodes chunk `chunkIndex` of an entity (`pread`; safe from any thread).
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the entity, the chunk and its byte offset when the
    ///   chunk is damaged or cannot be read. The LogFormat error is attached as the underlying one only for a read
    ///   that failed (``EventGraphError/isFailedRead``, which a box tries again): a damaged *frame* makes the
    ///   container advise a read-only view up to the damage, which a damaged chunk of the checkpoint the view would
    ///   start from cannot offer yet.
    func load(_ entry: EntityChunkEntry, chunkIndex: Int, entityIndex: Int, entityName: String)
        throws(EventGraphError) -> CheckpointChunk
    {
        try visit(
            entry, chunkIndex: chunkIndex, entityIndex: entityIndex, entityName: entityName,
            visitor: CheckpointChunkCollector()
        ).chunk
    }

    /// Reads and verifies chunk `chunkIndex` of an entity as ``load(_:chunkIndex:entityIndex:entityName:)`` does,
    /// decoding it into `visitor` (see LogFormat's `CheckpointChunkVisitor`); returns the visitor.
    func visit<Visitor: CheckpointChunkVisitor>(
        _ entry: EntityChunkEntry, chunkIndex: Int, entityIndex: Int, entityName: String, visitor: consuming Visitor
    ) throws(EventGraphError) -> Visitor {
        do {
            return try reader.visitEntityChunk(
                entry, entityIndex: UInt32(entityIndex), checkpointTransactionID: checkpointTransactionID,
                visitor: visitor)
        } catch {
            throw damage(
                entry, chunkIndex: chunkIndex, entityName: entityName, error.message,
                underlying: error.code == .io ? error : nil)
        }
    }

    /// Reads and verifies chunk `chunkIndex` of an entity as ``load(_:chunkIndex:entityIndex:entityName:)`` does and
    /// returns the table of foreign stores it begins with, without decoding its records (LogFormat's
    /// `LogReader.readEntityChunkForeignStores(_:checkpointTransactionID:)`).
    func foreignStores(of entry: EntityChunkEntry, chunkIndex: Int, entityName: String) throws(EventGraphError)
        -> [LogUUID]
    {
        do {
            return try reader.readEntityChunkForeignStores(entry, checkpointTransactionID: checkpointTransactionID)
        } catch {
            throw damage(
                entry, chunkIndex: chunkIndex, entityName: entityName, error.message,
                underlying: error.code == .io ? error : nil)
        }
    }

    /// The error of a chunk that cannot be used: names the file, the entity, the chunk and its byte offset.
    func damage(
        _ entry: EntityChunkEntry, chunkIndex: Int, entityName: String, _ reason: String,
        underlying: LogFormatError? = nil
    ) -> EventGraphError {
        EventGraphError(
            .log,
            "\(reader.path): chunk \(chunkIndex) of entity \(entityName) (byte offset \(entry.byteOffset)) in the "
                + "checkpoint at transaction \(checkpointTransactionID) cannot be loaded: \(reason)",
            underlying: underlying)
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
    /// The names of the entity's properties in the model, by index: what a read that cannot be fulfilled names.
    var propertyNames: [String] = []
    /// How the entity's last decoded chunk filled its storages: what the next decode reserves (see
    /// ``DecodedChunkShape``).
    let shape = DecodedChunkShape()

    /// Reads, verifies and decodes one chunk into a column chunk whose slot *i* holds the chunk's record *i*: each
    /// value goes straight from the payload into its column (a string's bytes into the arena, checked to be UTF-8
    /// once), without a `PropertyValue` or a `String` per value. With `includesValues` false, only the slots are
    /// listed (keys, versions, value counts, live bits; every column empty): the same reads and checks, for a scan
    /// that hands out slots read through the chunk's box later (``LazyColumnChunk/slotListing()``).
    func columnChunk(_ entry: EntityChunkEntry, chunkIndex: Int, includesValues: Bool = true) throws(EventGraphError)
        -> ColumnChunk
    {
        // Room for the values as the entity's last decoded chunk held them (see `DecodedChunkShape`).
        var reserved = ColumnChunk()
        if includesValues, let shape = shape.shape {
            reserved.reserveCapacity(slotCount: Int(entry.objectCount), shape: shape)
        }
        let builder = try source.visit(
            entry, chunkIndex: chunkIndex, entityIndex: entityIndex, entityName: entityName,
            visitor: ColumnChunkBuilder(
                defaults: defaults, version: source.checkpointTransactionID, foreignStores: foreignStores,
                entityName: entityName, includesValues: includesValues, chunk: reserved))
        if let problem = builder.storeProblem ?? builder.propertyProblem {
            throw source.damage(entry, chunkIndex: chunkIndex, entityName: entityName, problem)
        }
        // The arrays grew by appending past what was reserved, or were not reserved (a frame gives no column's byte
        // count); at their size, a decoded chunk holds its values once, not up to twice (h47's heap profile: 56.5 MB
        // of arenas for 51 MB of attribute bytes). Reserved well, none has an eighth spare, and none is copied.
        var chunk = builder.chunk
        _ = consume builder  // so that the chunk's arrays are the only references to their storage
        chunk.shrinkToFit()
        if includesValues { shape.learn(from: chunk) }
        return chunk
    }
}

/// Builds a column chunk from an entity chunk as it is decoded: slot *i* holds record *i*, with the recorded
/// defaults for the properties the record leaves out. What it cannot use (a store the checkpoint's first chunk does
/// not list, a property the entity lacks) is noted and thrown once the chunk has decoded and passed LogFormat's
/// checks, in the order the checks ran when the chunk was decoded into records first. Without values
/// (`includesValues` false) it lists the slots only, checking the same.
struct ColumnChunkBuilder: CheckpointChunkVisitor {
    private(set) var chunk = ColumnChunk()
    let defaults: [PropertyValue]
    /// Whether the values are written into the columns (else the columns stay empty: a listing of the slots).
    let includesValues: Bool
    let version: UInt64
    /// The state's foreign stores, which the chunk's own table is re-expressed in.
    let foreignStores: [LogUUID]
    let entityName: String
    private var storeMap: [UInt32] = []
    private(set) var storeProblem: String?
    private(set) var propertyProblem: String?
    /// The slot of the record being decoded (`nil` when it is skipped: the chunk is full).
    private var slot: Int?
    private var key: UInt64 = 0
    /// For each property, the number of the last record that set it (the others take their default).
    private var setBy: [Int]
    private var recordNumber = 0

    init(
        defaults: [PropertyValue], version: UInt64, foreignStores: [LogUUID], entityName: String,
        includesValues: Bool = true, chunk: ColumnChunk = ColumnChunk()
    ) {
        self.chunk = chunk
        self.defaults = defaults
        self.includesValues = includesValues
        self.version = version
        self.foreignStores = foreignStores
        self.entityName = entityName
        setBy = Array(repeating: 0, count: defaults.count)
    }

    mutating func visitForeignStores(_ stores: [LogUUID]) {
        // A chunk's own table of foreign stores is re-expressed in the state's (every chunk of a checkpoint carries
        // the writer's one table, which the state interned when the directory was read).
        for uuid in stores {
            guard let index = foreignStores.firstIndex(of: uuid) else {
                if storeProblem == nil {
                    storeProblem = "it references store \(uuid), which the checkpoint's first chunk does not list"
                }
                storeMap.append(0)
                continue
            }
            storeMap.append(UInt32(index + 1))
        }
    }

    mutating func visitRecordCount(_ count: Int) {}

    mutating func visitRecord(_ object: ObjectReference) {
        recordNumber += 1
        key = object.key
        // LogFormat checks the count against the directory; a chunk listed with more objects than a column chunk
        // holds is refused there or by the directory's reader, and is never written into a full chunk here.
        slot = chunk.isFull ? nil : chunk.appendSlot(key: object.key, version: version, valueCount: defaults.count)
    }

    mutating func visitProperty(_ propertyIndex: UInt32, _ value: BorrowedPropertyValue) {
        let property = Int(propertyIndex)
        guard property < defaults.count else {
            if propertyProblem == nil {
                propertyProblem = "object \(key) sets property #\(property), which \(entityName) lacks"
            }
            return
        }
        guard let slot, includesValues else { return }
        setBy[property] = recordNumber
        switch value {
        case .value(let value):
            if storeMap.isEmpty {
                chunk.set(value, property: property, at: slot)
            } else {
                let change = PropertyChange(propertyIndex: propertyIndex, value: value)
                chunk.set(StoreState.localize(change, storeMap).value, property: property, at: slot)
            }
        case .bytes(let kind, let bytes, let isASCII):
            chunk.set(bytes: bytes, tag: ValueTag(kind), property: property, at: slot, isASCII: isASCII)
        case .toMany(let targets):
            if storeMap.isEmpty {
                // From the decoder's buffer into the column (an array only for a list long enough to keep its own).
                chunk.updateColumn(property: property, at: slot) { $0.set(manyTargets: targets, at: slot) }
            } else {
                // Localized as a list decoded whole: `.value` of the same targets.
                visitProperty(propertyIndex, .value(value.materialized))
            }
        }
    }

    mutating func endRecord() {
        guard let slot, includesValues else { return }
        for property in defaults.indices where setBy[property] != recordNumber {
            chunk.set(defaults[property], property: property, at: slot)
        }
    }
}

extension ValueTag {
    /// The tag of a byte value of a kind.
    init(_ kind: ByteValueKind) {
        switch kind {
        case .string: self = .string
        case .url: self = .url
        case .decimal: self = .decimal
        case .binary: self = .binary
        case .transformable: self = .transformable
        }
    }
}

extension ByteValueKind {
    /// The kind of a byte value's tag; `nil` for a tag whose values are not bytes.
    init?(_ tag: ValueTag) {
        switch tag {
        case .string: self = .string
        case .url: self = .url
        case .decimal: self = .decimal
        case .binary: self = .binary
        case .transformable: self = .transformable
        default: return nil
        }
    }
}
