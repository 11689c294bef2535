import LogFormat

/// A sorted index of one attribute over the committed rows of one entity: (value, key) entries in value order,
/// then key order.
///
/// Entries live in sorted chunks of at most ``chunkCapacity`` (a one-level B-tree), so a single insert or removal
/// costs a binary search plus a move of at most one chunk, and a copy of the state (copy-on-write) copies only the
/// chunks a later change touches. A batch larger than a fraction of the index is merged in one sort instead.
struct AttributeIndex: Sendable {
    struct Entry: Sendable {
        var value: AttributeValue
        var key: UInt64
    }

    /// The property the index covers.
    let propertyIndex: Int
    private var chunks: [[Entry]] = []
    /// The last entry of each chunk, in one array: the search for a chunk reads these, not each chunk it passes (its
    /// count and its last entry were two cache misses per step of the search; h72's profile of indexed eq).
    private var lastEntries: [Entry] = []
    private(set) var count = 0

    /// The most entries in one chunk; a full chunk splits in two.
    static let chunkCapacity = 256

    init(propertyIndex: Int) {
        self.propertyIndex = propertyIndex
    }

    // MARK: - Order

    /// The total order of entries: values by ``AttributeValue/compare(to:)`` (null first), then keys.
    @inline(__always)
    static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        switch order(a.value, b.value) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: a.key < b.key
        }
    }

    @inline(__always)
    static func order(_ a: AttributeValue, _ b: AttributeValue) -> ValueOrder {
        switch (a, b) {
        case (.int64(let x), .int64(let y)):
            return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        case (.string(let x), .string(let y)):
            return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        case (.date(let x), .date(let y)), (.double(let x), .double(let y)):
            return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        default: return a.compare(to: b) ?? .orderedSame
        }
    }

    /// Whether a filter compares `value` with `operand` at all: values of kinds that do not compare (a string
    /// stored where the model says date, in a damaged or crafted log) order as equal to everything in the index, but
    /// match no comparison, so a lookup leaves them out.
    @inline(__always)
    static func compares(_ value: AttributeValue, with operand: AttributeValue) -> Bool {
        switch (value, operand) {
        case (.int64, .int64), (.string, .string), (.date, .date), (.double, .double): true
        default: value.compare(to: operand) != nil
        }
    }

    /// Whether values of `type` can be indexed: they have a total order that ``AttributeValue/compare(to:)`` agrees
    /// with.
    static func canIndex(_ type: AttributeType) -> Bool {
        switch type {
        case .int16, .int32, .int64, .double, .float, .bool, .string, .date, .uuid, .url: true
        default: false
        }
    }

    /// Whether a filter operand can be located in an index of `type` values (it compares with them).
    static func canLocate(_ operand: AttributeValue, in type: AttributeType) -> Bool {
        switch (operand, type) {
        case (.null, _): true
        case (.int16, .int16), (.int16, .int32), (.int16, .int64), (.int16, .double), (.int16, .float),
            (.int32, .int16), (.int32, .int32), (.int32, .int64), (.int32, .double), (.int32, .float),
            (.int64, .int16), (.int64, .int32), (.int64, .int64), (.int64, .double), (.int64, .float),
            (.double, .int16), (.double, .int32), (.double, .int64), (.double, .double), (.double, .float),
            (.float, .int16), (.float, .int32), (.float, .int64), (.float, .double), (.float, .float):
            !(operand.numericValue?.isNaN ?? true)
        case (.date(let seconds), .date): !seconds.isNaN
        case (.double(let seconds), .date): !seconds.isNaN
        case (.bool, .bool), (.string, .string), (.uuid, .uuid), (.url, .url): true
        default: false
        }
    }

    /// Whether a stored value may enter the index (NaN has no place in the order).
    @inline(__always)
    static func isIndexable(_ value: AttributeValue) -> Bool {
        switch value {
        case .double(let v), .date(let v): !v.isNaN
        case .float(let v): !v.isNaN
        default: true
        }
    }

    // MARK: - Changes

    /// Applies one commit's changes: removals first, then insertions.
    mutating func apply(removing removals: [Entry], inserting insertions: [Entry]) {
        if removals.count + insertions.count > 64 && removals.count + insertions.count > count / 8 {
            rebuild(removing: removals, inserting: insertions)
            return
        }
        for entry in removals { remove(entry) }
        for entry in insertions { insert(entry) }
    }

    mutating func insert(_ entry: Entry) {
        guard Self.isIndexable(entry.value) else { return }
        count += 1
        if chunks.isEmpty {
            chunks.append([entry])
            chunks[0].reserveCapacity(Self.chunkCapacity)
            lastEntries = [entry]
            return
        }
        let chunk = chunkIndex(for: entry)
        let position = Self.firstPosition(in: chunks[chunk]) { Self.precedes($0, entry) }
        chunks[chunk].insert(entry, at: position)
        if chunks[chunk].count > Self.chunkCapacity {
            let upper = Array(chunks[chunk][(Self.chunkCapacity / 2)...])
            chunks[chunk].removeLast(upper.count)
            chunks.insert(upper, at: chunk + 1)
            lastEntries[chunk] = upper[upper.count - 1]
            lastEntries.insert(chunks[chunk][chunks[chunk].count - 1], at: chunk)
        } else if position == chunks[chunk].count - 1 {
            lastEntries[chunk] = entry
        }
    }

    mutating func remove(_ entry: Entry) {
        guard Self.isIndexable(entry.value), !chunks.isEmpty else { return }
        let chunk = chunkIndex(for: entry)
        let position = Self.firstPosition(in: chunks[chunk]) { Self.precedes($0, entry) }
        guard position < chunks[chunk].count, chunks[chunk][position].key == entry.key,
            Self.order(chunks[chunk][position].value, entry.value) == .orderedSame
        else { return }
        count -= 1
        chunks[chunk].remove(at: position)
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            lastEntries.remove(at: chunk)
        } else if position == chunks[chunk].count {
            lastEntries[chunk] = chunks[chunk][position - 1]
        }
    }

    /// An index of `entries`, given in any order (values that cannot be ordered are left out): sorted where they
    /// are, without the copy of them that ``rebuild(removing:inserting:)`` makes (building an entity's index from
    /// its columns: for 1M posts' dates, 32 MB fewer to allocate and fault in).
    init(propertyIndex: Int, building entries: consuming [Entry]) {
        self.init(propertyIndex: propertyIndex)
        var entries = entries
        entries.removeAll { !Self.isIndexable($0.value) }
        entries.sort(by: Self.precedes)
        replaceAll(withSorted: entries)
    }

    /// Replaces the entries by a sorted merge (for large batches and for building from a checkpoint).
    mutating func rebuild(removing removals: [Entry], inserting insertions: [Entry]) {
        var entries: [Entry] = []
        entries.reserveCapacity(count + insertions.count)
        if removals.isEmpty {
            for chunk in chunks { entries.append(contentsOf: chunk) }
        } else {
            var removed: [UInt64: AttributeValue] = [:]
            removed.reserveCapacity(removals.count)
            for entry in removals { removed[entry.key] = entry.value }
            for chunk in chunks {
                for entry in chunk {
                    if let value = removed[entry.key], Self.order(value, entry.value) == .orderedSame { continue }
                    entries.append(entry)
                }
            }
        }
        let sortedCount = entries.count
        for entry in insertions where Self.isIndexable(entry.value) { entries.append(entry) }
        if sortedCount == 0 {
            entries.sort(by: Self.precedes)
        } else if entries.count > sortedCount {
            entries[sortedCount...].sort(by: Self.precedes)
            entries = Self.merged(entries, at: sortedCount)
        }
        replaceAll(withSorted: entries)
    }

    private mutating func replaceAll(withSorted entries: [Entry]) {
        count = entries.count
        chunks.removeAll(keepingCapacity: true)
        lastEntries.removeAll(keepingCapacity: true)
        let fill = Self.chunkCapacity * 3 / 4
        var start = 0
        while start < entries.count {
            let end = min(start + fill, entries.count)
            var chunk: [Entry] = []
            chunk.reserveCapacity(Self.chunkCapacity)
            chunk.append(contentsOf: entries[start..<end])
            chunks.append(chunk)
            lastEntries.append(chunk[chunk.count - 1])
            start = end
        }
    }

    private static func merged(_ entries: [Entry], at split: Int) -> [Entry] {
        var result: [Entry] = []
        result.reserveCapacity(entries.count)
        var i = 0
        var j = split
        while i < split && j < entries.count {
            if precedes(entries[j], entries[i]) {
                result.append(entries[j]); j += 1
            } else {
                result.append(entries[i]); i += 1
            }
        }
        result.append(contentsOf: entries[i..<split])
        result.append(contentsOf: entries[j...])
        return result
    }

    // MARK: - Queries

    /// The keys whose values lie in `range`, or `nil` as soon as there are more than `limit` of them (a scan is
    /// then cheaper than the index). A value that does not compare with the range's bounds is left out (see
    /// ``compares(_:with:)``): the keys are exactly those of the values a filter's comparisons match.
    func keys(in range: IndexRange, limit: Int) -> [UInt64]? {
        guard !chunks.isEmpty else { return [] }
        // The first entry not below the lower bound.
        var chunk = 0
        var position = 0
        if let lower = range.lower {
            func isBelow(_ entry: Entry) -> Bool {
                switch Self.order(entry.value, lower.value) {
                case .orderedAscending: true
                case .orderedSame: !lower.isInclusive
                case .orderedDescending: false
                }
            }
            chunk = Self.firstPosition(in: lastEntries, isBelow)
            guard chunk < chunks.count else { return [] }
            position = Self.firstPosition(in: chunks[chunk], isBelow)
        }
        var keys: [UInt64] = []
        while chunk < chunks.count {
            let entries = chunks[chunk]
            while position < entries.count {
                let entry = entries[position]
                position += 1
                if let lower = range.lower, !Self.compares(entry.value, with: lower.value) { continue }
                if let upper = range.upper, !Self.compares(entry.value, with: upper.value) { continue }
                if let upper = range.upper {
                    switch Self.order(entry.value, upper.value) {
                    case .orderedAscending: break
                    case .orderedSame: if !upper.isInclusive { return keys }
                    case .orderedDescending: return keys
                    }
                }
                if keys.count == limit { return nil }
                keys.append(entry.key)
            }
            chunk += 1
            position = 0
        }
        return keys
    }

    /// Every entry in order (for tests).
    var entries: [Entry] { chunks.flatMap { $0 } }

    /// Whether the last entry kept for each chunk is its last entry (for tests).
    var lastEntriesMatchChunks: Bool {
        lastEntries.count == chunks.count
            && zip(lastEntries, chunks).allSatisfy { last, chunk in
                chunk.last.map { $0.key == last.key && Self.order($0.value, last.value) == .orderedSame } ?? false
            }
    }

    /// The chunk an entry belongs in: the first whose last entry does not precede it, else the last.
    private func chunkIndex(for entry: Entry) -> Int {
        let index = Self.firstPosition(in: lastEntries) { Self.precedes($0, entry) }
        return min(index, chunks.count - 1)
    }

    /// The first position whose element is not `isBefore` (elements are partitioned: all `isBefore` ones first).
    @inline(__always)
    private static func firstPosition<C: RandomAccessCollection>(in elements: C, _ isBefore: (C.Element) -> Bool) -> Int
    where C.Index == Int {
        var low = elements.startIndex
        var high = elements.endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if isBefore(elements[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// A range of attribute values for an index lookup; a missing bound is open.
struct IndexRange: Sendable {
    struct Bound: Sendable {
        var value: AttributeValue
        var isInclusive: Bool
    }

    var lower: Bound?
    var upper: Bound?

    /// Narrows the range by another condition (for conjunctions on one attribute).
    mutating func intersect(_ other: IndexRange) {
        if let bound = other.lower {
            if let current = lower {
                switch AttributeIndex.order(bound.value, current.value) {
                case .orderedDescending: lower = bound
                case .orderedSame:
                    lower = Bound(value: current.value, isInclusive: current.isInclusive && bound.isInclusive)
                case .orderedAscending: break
                }
            } else {
                lower = bound
            }
        }
        if let bound = other.upper {
            if let current = upper {
                switch AttributeIndex.order(bound.value, current.value) {
                case .orderedAscending: upper = bound
                case .orderedSame:
                    upper = Bound(value: current.value, isInclusive: current.isInclusive && bound.isInclusive)
                case .orderedDescending: break
                }
            } else {
                upper = bound
            }
        }
    }
}
