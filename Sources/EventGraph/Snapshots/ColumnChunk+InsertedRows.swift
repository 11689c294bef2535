import Dispatch
import LogFormat

/// A new object of a save of new objects, as the install appends it: its row, and the row's values as its insert
/// gives them (taken out of the row's storage once, not at each column's read).
struct InsertedRow {
    var row: Row
    var values: InsertedValues

    var key: UInt64 { row.key }
    var version: UInt64 { row.version }
}

/// Work that ``ColumnChunk/appendInserted(_:alongside:)`` runs beside the column writes of each batch of rows, with
/// the batch: one task among the columns' (the install records the rows' attribute index changes in it). The
/// batches run one after another, so it is never called twice at once.
typealias InsertedRowsTask = @Sendable (UnsafeBufferPointer<InsertedRow>) -> Void

extension ColumnChunk {
    /// How many rows a pass of ``appendInserted(_:alongside:)`` writes column by column: their changes (a post's
    /// ≈ 300 bytes) stay in a core's cache while each of the columns reads them.
    static let insertedBatchSize = 512

    /// Appends new objects after the used slots and writes their values column by column, the columns shared among
    /// the cores; returns the first object's slot. A large save's rows were written row by row on one core (two
    /// thirds of installing a bulk insert); each column still gets its slots in order, so the columns hold what
    /// ``append(key:version:values:)`` would write for each row in turn.
    ///
    /// `alongside`, when given, runs with each batch of rows as one more task beside its columns' writes, on
    /// whichever core is free.
    ///
    /// - Precondition: the rows fit in the chunk, and every row has as many values as the first (an entity's
    ///   inserts: its defaults' count).
    mutating func appendInserted(_ rows: UnsafeBufferPointer<InsertedRow>, alongside: InsertedRowsTask? = nil) -> Int {
        let first = slotCount
        guard let valueCount = rows.first?.values.defaults.count else { return first }
        precondition(rows.count <= Self.slotCapacity - first, "a chunk holds at most \(Self.slotCapacity) objects")
        for row in rows {
            precondition(row.values.defaults.count == valueCount, "rows of one entity have as many values")
            _ = appendSlot(key: row.key, version: row.version, valueCount: valueCount)
        }
        // The columns whose values are largest first (a post's body): the cores take them in this order, so the
        // longest one starts first and the others fill in beside it.
        let order = Self.columnsByLargestFirst(of: rows[rows.startIndex].values)
        var start = 0
        withColumnBuffer { columns in
            while start < rows.count {
                let batch = UnsafeBufferPointer(rebasing: rows[start..<min(rows.count, start + Self.insertedBatchSize)])
                let writes = ColumnWrites(
                    columns: columns, changes: batch.map { SavePrefetch.elements(of: $0.values.changes) },
                    defaults: batch.map { SavePrefetch.elements(of: $0.values.defaults) }, firstSlot: first + start,
                    order: order, rows: batch, alongside: alongside)
                DispatchQueue.concurrentPerform(iterations: writes.taskCount) { writes.run(task: $0) }
                start += batch.count
            }
        }
        return first
    }

    /// One batch of ``appendInserted(_:alongside:)``'s column writes, shared by the iterations that write its columns.
    ///
    /// The rows' changes and defaults are read in place, through their buffers, which the rows keep alive and
    /// unchanged while the iterations run: reading a row's ``InsertedValues`` retained and released its arrays, and
    /// the defaults, one array for every row of an entity, had both cores write its reference count in turn (half of
    /// the writes' time went to it, and the install was slower than one core's).
    ///
    /// `@unchecked Sendable`: each iteration writes one column, which no other iteration touches (each column's
    /// storages are arrays of its own, and the buffer of columns is neither resized nor moved while they run), and
    /// the rows are only read (the task beside them reads them too); the caller waits for every iteration before it
    /// uses the columns again.
    private struct ColumnWrites: @unchecked Sendable {
        let columns: UnsafeMutableBufferPointer<Column>
        let changes: [UnsafeBufferPointer<PropertyChange>]
        let defaults: [UnsafeBufferPointer<PropertyValue>]
        let firstSlot: Int
        let order: [Int]
        let rows: UnsafeBufferPointer<InsertedRow>
        let alongside: InsertedRowsTask?

        /// The columns' writes, and the work beside them first when there is some (as large as a long column's).
        var taskCount: Int { order.count + (alongside == nil ? 0 : 1) }

        func run(task: Int) {
            guard let alongside else { return write(column: order[task]) }
            if task == 0 { alongside(rows) } else { write(column: order[task - 1]) }
        }

        func write(column property: Int) {
            changes.withUnsafeBufferPointer { changes in
                defaults.withUnsafeBufferPointer { defaults in
                    for offset in changes.indices {
                        ColumnChunk.prefetchAhead(of: property, from: offset, changes: changes)
                        let slot = firstSlot + offset
                        if let position = InsertedValues.lastChange(of: property, in: changes[offset]) {
                            columns[property].set(changes[offset][position].value, at: slot)
                        } else {
                            columns[property].set(defaults[offset][property], at: slot)
                        }
                    }
                }
            }
        }
    }

    /// How far ahead a column's pass asks for a row's changes, and for what its value points to: a column's write of
    /// one row is a tenth of a row's (``SavePrefetch``'s distances are in rows written whole), so the distances are
    /// longer for the loads to arrive in time.
    static let columnValuesDistance = 48
    static let columnStorageDistance = 24

    /// Starts loading, for a column's pass, the changes of the row ``columnValuesDistance`` ahead and what
    /// the property's value of the one ``columnStorageDistance`` ahead points to (its string's bytes, its
    /// list): the pass reads them cold, each row's on one core only.
    @inline(__always)
    private static func prefetchAhead(
        of property: Int, from offset: Int, changes: UnsafeBufferPointer<UnsafeBufferPointer<PropertyChange>>
    ) {
        let values = offset &+ Self.columnValuesDistance
        if values < changes.count { SavePrefetch.prefetchValues(at: changes[values].baseAddress) }
        let storage = offset &+ Self.columnStorageDistance
        guard storage < changes.count else { return }
        if let position = InsertedValues.lastChange(of: property, in: changes[storage]) {
            // Read in place through the buffer: a copy of the value would retain it, waiting for the very line.
            SavePrefetch.prefetchStorage(
                of: UnsafeBufferPointer(rebasing: changes[storage][position...position]), lists: true, strings: true)
        }
    }

    /// The properties in decreasing order of the bytes of `values`' value (ties in property order).
    private static func columnsByLargestFirst(of values: InsertedValues) -> [Int] {
        let sizes = (0..<values.defaults.count).map { property -> Int in
            switch values[property] {
            case .attribute(let attribute): attribute.withBytesEncoding { _, bytes in bytes.count } ?? 8
            case .toOne: 8
            case .toMany(let targets): targets.count * 16
            }
        }
        return sizes.indices.sorted { sizes[$0] != sizes[$1] ? sizes[$0] > sizes[$1] : $0 < $1 }
    }
}
