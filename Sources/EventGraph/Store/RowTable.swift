/// The committed rows of one entity, in commit order (deterministic across reopen), with a key → position map.
///
/// Deleting leaves a hole that scans skip; holes are compacted away once they outnumber the live rows.
struct RowTable: Sendable {
    private(set) var rows: [Row?] = []
    private var positions: [UInt64: Int] = [:]
    private var holeCount = 0

    var count: Int { positions.count }

    func row(forKey key: UInt64) -> Row? {
        positions[key].flatMap { rows[$0] }
    }

    /// The row's position in ``rows`` (commit order).
    func position(forKey key: UInt64) -> Int? {
        positions[key]
    }

    /// Makes room for `count` more rows.
    mutating func reserveCapacity(adding count: Int) {
        // Geometric, so that many medium-sized commits do not each copy the table.
        if rows.capacity < rows.count + count { rows.reserveCapacity(max(rows.count + count, rows.capacity * 2)) }
        positions.reserveCapacity(positions.count + count)
    }

    /// Inserts or replaces the row with the same key.
    mutating func put(_ row: Row) {
        if let position = positions[row.key] {
            rows[position] = row
        } else {
            positions[row.key] = rows.count
            rows.append(row)
        }
    }

    mutating func remove(key: UInt64) {
        guard let position = positions.removeValue(forKey: key) else { return }
        rows[position] = nil
        holeCount += 1
        if holeCount > 1024 && holeCount > positions.count { compact() }
    }

    private mutating func compact() {
        rows.removeAll { $0 == nil }
        positions.removeAll(keepingCapacity: true)
        for (position, row) in rows.enumerated() { positions[row!.key] = position }
        holeCount = 0
    }

    /// The live rows in order.
    var liveRows: some Sequence<Row> { rows.lazy.compactMap { $0 } }
}
