import LogFormat

/// One slot of one chunk version: what a handle ``Row`` reads its values from.
///
/// It holds the chunk's column array, so the storages it reads stay alive and unchanged: a commit that later writes
/// the chunk finds the array shared and copies it (and then the columns it writes) first. Reading a value decodes
/// that value only.
///
/// A column is read in place through the array's buffer: read through `Array`'s subscript, each property read copied
/// the whole ``Column`` (a retain and a release of each of its storages), which a profile of fetch-all showed under
/// `storedValue(at:)` ('outlined init with copy of Column').
struct ChunkSlot: Sendable {
    private let columns: [Column]
    private let position: UInt32
    private let count: UInt16

    init(_ chunk: ColumnChunk, position: Int) {
        precondition(chunk.isLive(position), "slot \(position) of a chunk is empty")
        columns = chunk.columns
        self.position = UInt32(position)
        count = chunk.valueCounts[position]
    }

    /// A column of the buffer, checked (a chunk read from a checkpoint is checked when decoded; this keeps an
    /// unchecked buffer read from ever going past the columns).
    @inline(__always)
    private static func column(_ property: Int, of buffer: UnsafeBufferPointer<Column>) -> UnsafePointer<Column> {
        precondition(property < buffer.count, "property \(property) has no column (\(buffer.count) columns)")
        return buffer.baseAddress! + property
    }

    /// How many properties the slot's row has (a later schema may have added some).
    var valueCount: Int { Int(count) }

    /// The value of one property, as ``ColumnChunk/row(at:entityIndex:)`` builds it (an absent value is `.null`).
    @inline(__always)
    func value(at property: Int) -> PropertyValue {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return columns.withUnsafeBufferPointer { Self.column(property, of: $0).pointee.value(at: Int(position)) }
            ?? .attribute(.null)
    }

    /// The value of one property as an attribute (`.null` for a relationship), without building a
    /// ``PropertyValue``.
    @inline(__always)
    func attributeValue(at property: Int) -> AttributeValue {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return columns.withUnsafeBufferPointer {
            Column.attributeValueUnlessRelationship(of: Self.column(property, of: $0), at: Int(position)) ?? .null
        }
    }

    /// The value of one property as an attribute, `nil` for a relationship (``value(at:)``'s attribute, without
    /// building a ``PropertyValue``).
    @inline(__always)
    func attributeValueUnlessRelationship(at property: Int) -> AttributeValue? {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return columns.withUnsafeBufferPointer {
            Column.attributeValueUnlessRelationship(of: Self.column(property, of: $0), at: Int(position))
        }
    }
}

extension ColumnChunk {
    /// A row of a live slot that reads its values from this chunk version instead of copying them.
    func rowHandle(at position: Int, entityIndex: Int) -> Row {
        Row(
            entityIndex: entityIndex, key: keys[position], version: versions[position],
            slot: ChunkSlot(self, position: position))
    }
}

extension EntityColumns {
    /// A handle row of a live object (see ``Row``), for readers that keep it.
    func rowHandle(forKey key: UInt64) -> Row? {
        slot(forKey: key).map { rowHandle(atSlot: $0) }
    }

    /// A handle row of a live slot.
    func rowHandle(atSlot slot: Int) -> Row {
        chunk(at: slot / ColumnChunk.slotCapacity).rowHandle(
            at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex)
    }

    /// The handle rows of the live objects in commit order: no value is copied.
    var liveRowHandles: [Row] { collectLiveRowHandles { $0 } }

    /// ``liveRowHandles`` as a scan's batch holds them (``StoreRows/rows``), without a second array.
    var liveRowHandleSlots: [Row?] { collectLiveRowHandles { $0 } }

    private func collectLiveRowHandles<Element>(_ wrap: (Row) -> Element) -> [Element] {
        var rows: [Element] = []
        rows.reserveCapacity(count)
        forEachLiveSlot { chunk, position, _ in
            rows.append(wrap(chunk.rowHandle(at: position, entityIndex: entityIndex)))
        }
        return rows
    }
}

extension StoreState {
    /// A handle row of an object, for readers that keep it (contexts); the commit path reads
    /// ``row(entityIndex:key:)``, whose values are copied, so that the rows it holds while writing a chunk do not
    /// make the write copy the chunk.
    func rowHandle(entityIndex: Int, key: UInt64) -> Row? {
        tables[entityIndex].rowHandle(forKey: key)
    }
}
