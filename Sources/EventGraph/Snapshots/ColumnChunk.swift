import LogFormat

/// Up to ``slotCapacity`` objects of one entity, stored by column: per slot the key, the version and the number of
/// properties its row has; a bitmap of the live slots; one ``Column`` per property.
///
/// A chunk is a value: a copy shares every array with the original until one of them is written, so a commit
/// copies only the chunks, and within them only the columns, it changes.
struct ColumnChunk: Sendable {
    /// The most slots in one chunk.
    static let slotCapacity = 4096

    private(set) var keys: [UInt64] = []
    private(set) var versions: [UInt64] = []
    /// How many properties each slot's row has (a later schema may have added some).
    private(set) var valueCounts: [UInt16] = []
    /// Bit `slot % 64` of word `slot / 64` is set when the slot holds a live object.
    private(set) var liveBits = [UInt64](repeating: 0, count: slotCapacity / 64)
    private(set) var columns: [Column] = []

    /// What an entity's chunk list holds in the place of a chunk that is still on disk (and what a damaged chunk
    /// reads as): no object.
    static let unloaded = ColumnChunk()

    /// The number of slots used (live or emptied); new objects go after them.
    var slotCount: Int { keys.count }

    /// Whether no more objects fit.
    var isFull: Bool { keys.count == Self.slotCapacity }

    @inline(__always)
    func isLive(_ slot: Int) -> Bool { liveBits[slot >> 6] & (1 << UInt64(slot & 63)) != 0 }

    /// The chunk with other columns for the same slots (a coordinator's renumbered references, see
    /// ``Column/renumberingStores(_:)``): keys, versions and live slots are shared.
    func replacingColumns(_ columns: [Column]) -> ColumnChunk {
        precondition(columns.count == self.columns.count, "a chunk's columns are replaced one for one")
        var chunk = self
        chunk.columns = columns
        return chunk
    }

    /// The row of a live slot.
    func row(at slot: Int, entityIndex: Int) -> Row {
        precondition(isLive(slot), "slot \(slot) of a chunk of entity #\(entityIndex) is empty")
        let count = Int(valueCounts[slot])
        var values: [PropertyValue] = []
        values.reserveCapacity(count)
        // Columns are borrowed through a pointer: `columns[property]` copied the whole column (a retain and a release
        // of each of its storages) for every value of every row a commit or a lookup builds.
        columns.withUnsafeBufferPointer { buffer in
            precondition(count <= buffer.count, "slot \(slot) has \(count) values in \(buffer.count) columns")
            guard let columns = buffer.baseAddress else { return }
            for property in 0..<count { values.append(columns[property].value(at: slot) ?? .attribute(.null)) }
        }
        return Row(entityIndex: entityIndex, key: keys[slot], version: versions[slot], values: values)
    }

    /// The row of a live slot with only `properties` decoded: the others read as null.
    func row(at slot: Int, entityIndex: Int, decoding properties: [Int]) -> Row {
        precondition(isLive(slot), "slot \(slot) of a chunk of entity #\(entityIndex) is empty")
        let count = Int(valueCounts[slot])
        var values = [PropertyValue](repeating: .attribute(.null), count: count)
        for property in properties where property < count {
            values[property] = columns[property].value(at: slot) ?? .attribute(.null)
        }
        return Row(entityIndex: entityIndex, key: keys[slot], version: versions[slot], values: values)
    }

    /// The value of one attribute of a live slot (`.null` for a relationship or a property the row lacks).
    ///
    /// The column is read in place, through the array's buffer: `columns[property].attributeValue(at:)` copied the
    /// whole column first (a retain and a release of each of its storages per value: two thirds of the retains and
    /// releases of a compaction's stored-index build in h90's profile of compact-1m).
    func attributeValue(at slot: Int, property: Int) -> AttributeValue {
        columns.withUnsafeBufferPointer { columns in
            guard property < columns.count, let base = columns.baseAddress else { return .null }
            return Column.attributeValueUnlessRelationship(of: base + property, at: slot) ?? .null
        }
    }

    /// Makes room, in a new chunk, for as many objects as `full` (the chunk before it, full) holds, with values
    /// like its own (see ``Column/reserveCapacity(slotCount:like:)``).
    mutating func reserveCapacity(like full: ColumnChunk) {
        if columns.count < full.columns.count {
            columns.append(contentsOf: repeatElement(Column(), count: full.columns.count - columns.count))
        }
        for property in full.columns.indices {
            columns[property].reserveCapacity(slotCount: full.slotCount, like: full.columns[property])
        }
    }

    /// Makes room, in a new chunk about to be decoded from a checkpoint, for `slotCount` slots (at most
    /// ``slotCapacity``) filled as `shape` says (see ``DecodedChunkShape``): its per-slot arrays for `slotCount`
    /// exactly, its columns as ``Column/reserveCapacity(slotCount:like:of:)`` does.
    mutating func reserveCapacity(slotCount: Int, shape: DecodedChunkShape.Shape) {
        precondition(keys.isEmpty && columns.isEmpty, "only a new chunk is reserved from a shape")
        let slotCount = min(max(slotCount, 0), Self.slotCapacity)
        keys.reserveCapacity(slotCount)
        versions.reserveCapacity(slotCount)
        valueCounts.reserveCapacity(slotCount)
        columns = shape.columns.map { columnShape in
            var column = Column()
            column.reserveCapacity(slotCount: slotCount, like: columnShape, of: shape.slotCount)
            return column
        }
    }

    /// Drops the growth slack of the per-slot arrays and of every column (a chunk just decoded from a checkpoint:
    /// its arrays grew by appending, and the last chunk of an entity reserved room for ``slotCapacity`` slots).
    mutating func shrinkToFit() {
        ByteArena.shrinkToFit(&keys)
        ByteArena.shrinkToFit(&versions)
        ByteArena.shrinkToFit(&valueCounts)
        for property in columns.indices { columns[property].shrinkToFit() }
    }

    /// The bytes the chunk holds on the heap: its per-slot arrays and every column (see ``Column/heapByteCount``).
    var heapByteCount: Int {
        var total = keys.capacity &* 8 &+ versions.capacity &* 8 &+ valueCounts.capacity &* 2 &+ liveBits.capacity &* 8
        total &+= columns.capacity &* MemoryLayout<Column>.stride
        for column in columns { total &+= column.heapByteCount }
        return total
    }

    /// Adds a row after the used slots; returns its slot.
    mutating func append(_ row: Row) -> Int {
        append(key: row.key, version: row.version, values: row.values)
    }

    /// Adds an object after the used slots; returns its slot. (Decoding a checkpoint chunk calls this with each
    /// record's values, without a ``Row`` for each.)
    mutating func append(key: UInt64, version: UInt64, values: some RandomAccessCollection<PropertyValue>) -> Int {
        let slot = appendSlot(key: key, version: version, valueCount: values.count)
        write(values, at: slot)
        return slot
    }

    /// Replaces the row of a live slot with a row of the same object.
    mutating func replace(at slot: Int, with row: Row) {
        precondition(keys[slot] == row.key, "slot \(slot) holds key \(keys[slot]), not \(row.key)")
        if versions[slot] != row.version { versions[slot] = row.version }
        write(row.values, at: slot)
    }

    /// Adds an object with `valueCount` properties after the used slots, its values not written yet (a decoder
    /// writes each with ``set(_:property:at:)`` or ``set(bytes:tag:property:at:)``); returns its slot.
    mutating func appendSlot(key: UInt64, version: UInt64, valueCount: Int) -> Int {
        precondition(!isFull, "a chunk holds at most \(Self.slotCapacity) objects")
        precondition(valueCount <= Int(UInt16.max), "a row has at most 65,535 properties")
        let slot = keys.count
        if slot == 0, keys.capacity == 0 {
            // Not reserved from a shape (see ``reserveCapacity(slotCount:shape:)``).
            keys.reserveCapacity(Self.slotCapacity)
            versions.reserveCapacity(Self.slotCapacity)
            valueCounts.reserveCapacity(Self.slotCapacity)
        }
        keys.append(key)
        versions.append(version)
        valueCounts.append(UInt16(valueCount))
        if columns.count < valueCount {
            columns.append(contentsOf: repeatElement(Column(), count: valueCount - columns.count))
        }
        liveBits[slot >> 6] |= 1 << UInt64(slot & 63)
        return slot
    }

    /// Calls `body` with the columns' buffer, to write values of live slots column by column (see
    /// ``appendInserted(_:alongside:)``); the columns are neither added nor removed meanwhile.
    mutating func withColumnBuffer<R>(_ body: (UnsafeMutableBufferPointer<Column>) -> R) -> R {
        columns.withUnsafeMutableBufferPointer { body($0) }
    }

    /// Writes a byte value of a live slot in place from its bytes (see ``Column/set(bytes:tag:at:isASCII:)``).
    mutating func set(bytes: UnsafeRawBufferPointer, tag: ValueTag, property: Int, at slot: Int, isASCII: Bool? = nil) {
        precondition(property < Int(valueCounts[slot]), "slot \(slot) has no property #\(property)")
        columns[property].set(bytes: bytes, tag: tag, at: slot, isASCII: isASCII)
    }

    /// Calls `body` with the column of a live slot's property, to write the slot's value in it (a replayed
    /// changeset's values, which are written by kind without a ``PropertyValue``: see
    /// ``ReplayChangeset/write(_:into:at:)``).
    @inline(__always)
    mutating func updateColumn<R>(property: Int, at slot: Int, _ body: (inout Column) -> R) -> R {
        precondition(property < Int(valueCounts[slot]), "slot \(slot) has no property #\(property)")
        return body(&columns[property])
    }

    /// The number of properties a live slot's row has.
    func valueCount(at slot: Int) -> Int { Int(valueCounts[slot]) }

    /// Replaces the values of a live slot (and its version) with `values`, as ``replace(at:with:)`` does with a row.
    mutating func replace(at slot: Int, version: UInt64, values: some RandomAccessCollection<PropertyValue>) {
        if versions[slot] != version { versions[slot] = version }
        write(values, at: slot)
    }

    /// Writes one value of a live slot in place, below its row's value count (a replayed update writes only the
    /// columns it changes; the others keep sharing their storage with older versions of the chunk).
    mutating func set(_ value: PropertyValue, property: Int, at slot: Int) {
        precondition(property < Int(valueCounts[slot]), "slot \(slot) has no property #\(property)")
        columns[property].set(value, at: slot)
    }

    /// Writes the prepared defaults of a new slot's properties, except those whose entry in `setBy` is `number`
    /// (written by the insert itself): a replayed insert's defaults, through the column array's buffer (no
    /// uniqueness check of the array per property).
    mutating func setDefaults(_ defaults: [PreparedColumnValue], at slot: Int, except setBy: [Int], number: Int) {
        precondition(defaults.count <= Int(valueCounts[slot]), "slot \(slot) has fewer properties than defaults")
        precondition(setBy.count >= defaults.count, "every default needs an entry in setBy")
        columns.withUnsafeMutableBufferPointer { columns in
            for property in defaults.indices where setBy[property] != number {
                columns[property].set(defaults[property], at: slot)
            }
        }
    }

    /// Edits the to-many list of a live slot's property in place (see ``Column/editMany(at:_:)``).
    mutating func editMany(
        property: Int, at slot: Int, _ edit: (inout [ObjectReference], _ keyBound: UInt64?) -> UInt64?
    ) {
        precondition(property < Int(valueCounts[slot]), "slot \(slot) has no property #\(property)")
        columns[property].editMany(at: slot, edit)
    }

    /// Whether a live slot's property holds a to-many list.
    func holdsMany(property: Int, at slot: Int) -> Bool {
        property < Int(valueCounts[slot]) && columns[property].tag(at: slot) == .toMany
    }

    /// Sets the version of a live slot (the transaction that last changed it).
    mutating func setVersion(_ version: UInt64, at slot: Int) {
        if versions[slot] != version { versions[slot] = version }
    }

    /// Empties a slot: its values are let go of and it is never reused (slots stay in commit order).
    mutating func remove(at slot: Int) {
        liveBits[slot >> 6] &= ~(1 << UInt64(slot & 63))
        for property in 0..<Int(valueCounts[slot]) { columns[property].set(nil, at: slot) }
        valueCounts[slot] = 0
    }

    private mutating func write(_ values: some RandomAccessCollection<PropertyValue>, at slot: Int) {
        let count = values.count
        precondition(count <= Int(UInt16.max), "a row has at most 65,535 properties")
        let old = Int(valueCounts[slot])
        if columns.count < count {
            columns.append(contentsOf: repeatElement(Column(), count: count - columns.count))
        }
        // An array's values (a commit's rows, a replayed insert) are read through its buffer and written through the
        // columns' buffer: no iterator, and no uniqueness check of the column array per value.
        let written: Void? = values.withContiguousStorageIfAvailable { values in
            columns.withUnsafeMutableBufferPointer { columns in
                for property in values.indices { columns[property].set(values[property], at: slot) }
            }
        }
        if written == nil {
            if let row = values as? RowValues, case .inserted(let inserted) = row.storage {
                // A new object's values, read in place from its insert's changes and the entity's defaults.
                columns.withUnsafeMutableBufferPointer { columns in
                    inserted.forEachValue { property, value in columns[property].set(value, at: slot) }
                }
            } else {
                for (property, value) in values.enumerated() { columns[property].set(value, at: slot) }
            }
        }
        if old > count { for property in count..<old { columns[property].set(nil, at: slot) } }
        if old != count { valueCounts[slot] = UInt16(count) }
        if !isLive(slot) { liveBits[slot >> 6] |= 1 << UInt64(slot & 63) }
    }

    /// Whether two chunks share their storage (one is an unchanged copy of the other), for tests of sharing.
    func sharesStorage(with other: ColumnChunk) -> Bool {
        func same<T>(_ a: [T], _ b: [T]) -> Bool {
            a.withUnsafeBufferPointer { mine in b.withUnsafeBufferPointer { mine.baseAddress == $0.baseAddress } }
        }
        return same(versions, other.versions) && same(liveBits, other.liveBits)
    }
}
