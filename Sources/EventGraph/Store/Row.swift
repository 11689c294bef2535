import LogFormat

/// The committed values of one object: immutable, replaced whole by each transaction that changes the object.
///
/// Its ``version`` (the transaction that last changed the object) is what optimistic conflict detection compares at
/// save.
///
/// A row holds its values in one of two ways. A row that a commit or a replay builds holds them in an array. A
/// *handle* reads one slot of the chunk version it was taken from (``ChunkSlot``): it copies no value up front, and
/// each read decodes one value from the columns, the way Realm's accessors read theirs. A chunk version is immutable
/// (a later commit copies the chunk before writing it), so a handle keeps reading the values it was taken with,
/// whatever is committed after. Objects that a reader fetches, fires or looks up hold the slot itself, without a
/// row (``CommittedValues``); a handle row is made from it only when code needs a `Row` (a save's read set, a merge,
/// a child context's overlay).
final class Row: Sendable {
    let entityIndex: Int
    let key: UInt64
    /// The transaction that last changed the object.
    let version: UInt64
    /// One value per property of the entity (transient attributes hold `.null`).
    let values: RowValues

    init(entityIndex: Int, key: UInt64, version: UInt64, values: [PropertyValue]) {
        self.entityIndex = entityIndex
        self.key = key
        self.version = version
        self.values = RowValues(.array(values))
    }

    /// The row of a new object, read from its insert's changes over the entity's defaults: staging a save of new
    /// objects builds no array of every value per object, and retains none of the values again (the row shares the
    /// changes' array with the changeset).
    ///
    /// - Precondition: every change's property index is below `defaults.count`.
    init(entityIndex: Int, key: UInt64, version: UInt64, changes: [PropertyChange], defaults: [PropertyValue]) {
        self.entityIndex = entityIndex
        self.key = key
        self.version = version
        self.values = RowValues(.inserted(InsertedValues(changes: changes, defaults: defaults)))
    }

    /// A row that reads its values from a slot of a chunk version.
    init(entityIndex: Int, key: UInt64, version: UInt64, slot: ChunkSlot) {
        self.entityIndex = entityIndex
        self.key = key
        self.version = version
        self.values = RowValues(.slot(slot))
    }

    var reference: ObjectReference {
        ObjectReference(entityIndex: UInt32(entityIndex), key: key)
    }

    /// Whether the row reads its values from a chunk version instead of holding them (for tests).
    var isHandle: Bool {
        if case .slot = values.storage { return true }
        return false
    }
}

/// The values of a ``Row``, by property index: an array, or a slot of a chunk version decoded on each read.
///
/// Reading one value of a handle decodes that value only (a string is built from the arena's bytes); code that reads
/// every value several times should copy them once (`Array(row.values)`).
struct RowValues: RandomAccessCollection, Equatable, Sendable {
    enum Storage: Sendable {
        case array([PropertyValue])
        case slot(ChunkSlot)
        case inserted(InsertedValues)
    }

    let storage: Storage

    init(_ storage: Storage) {
        self.storage = storage
    }

    static func == (lhs: RowValues, rhs: RowValues) -> Bool { lhs.elementsEqual(rhs) }

    var startIndex: Int { 0 }

    var endIndex: Int {
        switch storage {
        case .array(let values): values.count
        case .slot(let slot): slot.valueCount
        case .inserted(let values): values.defaults.count
        }
    }

    @inline(__always)
    subscript(index: Int) -> PropertyValue {
        switch storage {
        case .array(let values): values[index]
        case .slot(let slot): slot.value(at: index)
        case .inserted(let values): values[index]
        }
    }

    /// The box of the checkpoint chunk a handle reads through, if it reads one (see ``ChunkSlot``).
    var checkpointChunk: LazyColumnChunk? {
        guard case .slot(let slot) = storage else { return nil }
        return slot.checkpointChunk
    }

    /// The values as an array: the row's own array (shared, not copied), or a handle's values decoded.
    var array: [PropertyValue] {
        switch storage {
        case .array(let values): values
        case .slot, .inserted: Array(self)
        }
    }

    /// The value of one property as an attribute, `nil` for a relationship: what a property read of an object
    /// without unsaved changes returns (a handle decodes the one value, no ``PropertyValue`` is built).
    @inline(__always)
    func attributeValueUnlessRelationship(at index: Int) -> AttributeValue? {
        switch storage {
        case .array(let values):
            if case .attribute(let value) = values[index] { return value }
            return nil
        case .slot(let slot): return slot.attributeValueUnlessRelationship(at: index)
        case .inserted(let values):
            if case .attribute(let value) = values[index] { return value }
            return nil
        }
    }

    /// The value of one property as an attribute: `.null` for a relationship.
    @inline(__always)
    func attributeValue(at index: Int) -> AttributeValue {
        switch storage {
        case .array(let values):
            if case .attribute(let value) = values[index] { return value }
            return .null
        case .slot(let slot): return slot.attributeValue(at: index)
        case .inserted(let values):
            if case .attribute(let value) = values[index] { return value }
            return .null
        }
    }
}

/// The values of a new object as its insert gives them: the changes, over the entity's defaults for the properties
/// they leave out (what staging an insert computes, without copying them into one array).
struct InsertedValues: Sendable {
    let changes: [PropertyChange]
    let defaults: [PropertyValue]

    /// The value of one property: the last change of it, else its default.
    @inline(__always)
    subscript(index: Int) -> PropertyValue {
        changes.withUnsafeBufferPointer { changes in
            guard let position = Self.lastChange(of: index, in: changes) else { return defaults[index] }
            return changes[position].value
        }
    }

    /// Calls `body` with each property's value in property order, read in place from the changes' and the defaults'
    /// buffers: what a column write of a new object reads (through the subscript, each value was copied out of an
    /// enum payload and retained: 5 % of a bulk insert's CPU).
    @inline(__always)
    func forEachValue(_ body: (_ property: Int, _ value: PropertyValue) -> Void) {
        changes.withUnsafeBufferPointer { changes in
            defaults.withUnsafeBufferPointer { defaults in
                for property in defaults.indices {
                    if let position = Self.lastChange(of: property, in: changes) {
                        body(property, changes[position].value)
                    } else {
                        body(property, defaults[property])
                    }
                }
            }
        }
    }

    /// The position of the last change of a property. A few changes per object (a post's eight): a scan, from the
    /// last, as later changes overwrite earlier ones.
    @inline(__always)
    static func lastChange(of property: Int, in changes: UnsafeBufferPointer<PropertyChange>) -> Int? {
        var position = changes.endIndex
        while position > changes.startIndex {
            position -= 1
            if changes[position].propertyIndex == property { return position }
        }
        return nil
    }
}

extension PropertyValue {
    /// The targets of a relationship value.
    var references: [ObjectReference] {
        switch self {
        case .attribute: []
        case .toOne(let reference): reference.map { [$0] } ?? []
        case .toMany(let references): references
        }
    }
}
