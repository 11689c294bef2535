import LogFormat

/// The committed values an object reads: a ``Row``, or a slot of the chunk version it was read from, held without
/// a `Row` object.
///
/// A fetch, a fault firing and a lookup by ID hand out slots: a heap `Row` for each fetched object was one
/// allocation to make and one to free per object (a fifth of a fetch-all's CPU was collecting and tearing down
/// objects and rows), and most fetched objects are never changed. The `Row` is made from the slot only when
/// something needs one — a save's read set, a merge, a conflict check, a child context's overlay (see
/// ``ManagedObject/row``). A slot reads the same values the row made from it reads: a chunk version is immutable,
/// so an object keeps reading the version it was fetched at, whatever is committed after.
enum CommittedValues: Sendable {
    /// Values held by a row (built by a commit, a merge or a replay, or made from a slot).
    case row(Row)
    /// A live slot of a chunk version and the transaction that last changed the object there.
    case slot(ChunkSlot, version: UInt64)

    /// The transaction that last changed the object.
    var version: UInt64 {
        switch self {
        case .row(let row): row.version
        case .slot(_, let version): version
        }
    }

    /// The value of one property (a handle decodes the one value).
    @inline(__always)
    func value(at index: Int) -> PropertyValue {
        switch self {
        case .row(let row): row.values[index]
        case .slot(let slot, _): slot.value(at: index)
        }
    }

    /// The value of one property as an attribute: `.null` for a relationship.
    @inline(__always)
    func attributeValue(at index: Int) -> AttributeValue {
        switch self {
        case .row(let row): row.values.attributeValue(at: index)
        case .slot(let slot, _): slot.attributeValue(at: index)
        }
    }

    /// The value of one property as an attribute, `nil` for a relationship.
    @inline(__always)
    func attributeValueUnlessRelationship(at index: Int) -> AttributeValue? {
        switch self {
        case .row(let row): row.values.attributeValueUnlessRelationship(at: index)
        case .slot(let slot, _): slot.attributeValueUnlessRelationship(at: index)
        }
    }

    /// Whether both read the same values: the same row object, or the same slot of the same chunk version.
    func isSame(as other: CommittedValues) -> Bool {
        switch (self, other) {
        case (.row(let lhs), .row(let rhs)): lhs === rhs
        case (.slot(let lhs, let lhsVersion), .slot(let rhs, let rhsVersion)):
            lhsVersion == rhsVersion && lhs.isSame(as: rhs)
        default: false
        }
    }

    /// The box of the checkpoint chunk these values read through, if they are a slot of one (or a handle row on
    /// such a slot): its decoded form may be evicted, and reading it again may fail (see ``ChunkSlot``).
    var checkpointChunk: LazyColumnChunk? {
        switch self {
        case .slot(let slot, _): slot.checkpointChunk
        case .row(let row): row.values.checkpointChunk
        }
    }

    /// A row of these values: the held row, or a handle row on the slot (an allocation).
    func row(entityIndex: Int, key: UInt64) -> Row {
        switch self {
        case .row(let row): row
        case .slot(let slot, let version): Row(entityIndex: entityIndex, key: key, version: version, slot: slot)
        }
    }
}

/// A committed object as a scan or a lookup hands it out: its entity, key and values, without a heap ``Row`` when
/// the values are a chunk slot.
struct CommittedRow: Sendable {
    let entityIndex: Int
    let key: UInt64
    let values: CommittedValues

    init(entityIndex: Int, key: UInt64, values: CommittedValues) {
        self.entityIndex = entityIndex
        self.key = key
        self.values = values
    }

    init(_ row: Row) {
        self.init(entityIndex: row.entityIndex, key: row.key, values: .row(row))
    }

    /// The object's identity, given the index of the store that holds it.
    @inline(__always)
    func identity(inStore storeIndex: UInt32) -> ObjectIdentity {
        ObjectIdentity(storeIndex: storeIndex, key: key)
    }

    /// A ``Row`` of the object: the held row, or a handle row made now.
    var row: Row { values.row(entityIndex: entityIndex, key: key) }
}
