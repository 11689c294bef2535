import LogFormat

/// One part of a live-state migration's new state: per new entity, at most one range of keys, so that the objects a
/// window holds are a run of the state in (entity name, key) order, and consecutive windows continue that run. A
/// window is built by a pass over the old log that keeps only the operations and checkpoint records of its objects
/// (each names its one object, so an object in a window is whole), then written and forgotten.
struct MigrationWindow {
    /// Per new entity index, the keys the window holds (`nil`: none of that entity).
    let ranges: [ClosedRange<UInt64>?]
    /// The live objects the first pass counted in the window.
    let objectCount: Int
    /// Whether this is the first window: it also takes what names no object of this store in the new model (the
    /// engine's replay reports those as anomalies; they are kept in one window so that it sees them as a whole state
    /// would).
    let isFirst: Bool

    /// The objects of a sample window (``init(sampling:entityCount:)``); `nil`: every object in the ranges.
    private var sample: Set<ObjectReference>?

    init(ranges: [ClosedRange<UInt64>?], objectCount: Int, isFirst: Bool) {
        self.ranges = ranges
        self.objectCount = objectCount
        self.isFirst = isFirst
    }

    /// A window of a few chosen objects (of entities below `entityCount`), not a run of the state: a dry run builds
    /// the objects it reports as breaking a rule.
    init(sampling objects: Set<ObjectReference>, entityCount: Int) {
        var ranges = [ClosedRange<UInt64>?](repeating: nil, count: entityCount)
        for object in objects where object.storeIndex == 0 && Int(object.entityIndex) < entityCount {
            let entity = Int(object.entityIndex)
            let range = ranges[entity]
            ranges[entity] = min(range?.lowerBound ?? object.key, object.key)...max(range?.upperBound ?? 0, object.key)
        }
        self.init(ranges: ranges, objectCount: objects.count, isFirst: false)
        sample = objects
    }

    /// Whether the window holds `object`.
    func contains(_ object: ObjectReference) -> Bool {
        guard object.storeIndex == 0, Int(object.entityIndex) < ranges.count else { return isFirst }
        if let sample { return sample.contains(object) }
        return ranges[Int(object.entityIndex)]?.contains(object.key) ?? false
    }

    /// Whether the window holds any object of `entity` with a key in `keys`.
    func overlaps(entity: UInt32, _ keys: ClosedRange<UInt64>) -> Bool {
        guard Int(entity) < ranges.count, let range = ranges[Int(entity)] else { return false }
        return range.overlaps(keys)
    }

    /// Cuts the live keys of each entity (`sortedKeys[i]`, ascending, for entity index `i`), visited in `order`,
    /// into windows of at most `maxObjectCount` objects each.
    static func windows(sortedKeys: [[UInt64]], order: [Int], maxObjectCount: Int) -> [MigrationWindow] {
        let capacity = max(1, maxObjectCount)
        var windows: [MigrationWindow] = []
        var ranges = [ClosedRange<UInt64>?](repeating: nil, count: sortedKeys.count)
        var count = 0
        func close() {
            windows.append(MigrationWindow(ranges: ranges, objectCount: count, isFirst: windows.isEmpty))
            ranges = [ClosedRange<UInt64>?](repeating: nil, count: sortedKeys.count)
            count = 0
        }
        for entity in order where entity < sortedKeys.count {
            let keys = sortedKeys[entity]
            var start = 0
            while start < keys.count {
                let end = min(keys.count, start + capacity - count)
                ranges[entity] = keys[start]...keys[end - 1]
                count += end - start
                start = end
                if count == capacity { close() }
            }
        }
        if count > 0 || windows.isEmpty { close() }
        return windows
    }
}

/// What the first pass of a live-state migration learns about each transaction so that a window's pass decodes only
/// the transactions that touch its objects: per transaction, the range of keys it touches per new entity.
///
/// Used only when every step is inferred (a custom stage's code keeps state across the whole log, so its passes
/// map every transaction). The spans are kept in one flat array; past ``maxSpanCount`` (a log of very many
/// transactions) they are dropped and every window's pass decodes every transaction, which costs time, not memory.
struct MigrationTransactionSpans {
    /// One entity's keys touched by one transaction; a transaction's spans are consecutive, in log order.
    private struct Span {
        var transactionID: UInt64
        var entity: UInt32
        var keys: ClosedRange<UInt64>
    }

    static let maxSpanCount = 1 << 20
    private var spans: [Span] = []
    /// Transactions with an operation on what no window's range can name (another store's object, an entity the
    /// new model lacks): the first window reads them.
    private var firstWindowTransactions: Set<UInt64> = []
    /// Whether the spans are complete (not dropped past ``maxSpanCount``).
    private(set) var isComplete = true
    /// The last transaction a checkpoint of the old log contains: every transaction up to it is replaced by the
    /// checkpoint, so a window's pass need not decode it.
    var checkpointTransactionID: UInt64?
    /// Whether transaction IDs grew along the log so far (a transaction's spans are found by binary search).
    private var isSorted = true

    /// Records the keys the mapped `changeset` touches: per entity, at most ``maxRangesPerEntity`` key ranges (a
    /// transaction that inserts new objects and updates a few old ones touches a few narrow ranges, not one wide
    /// one).
    mutating func note(_ changeset: Changeset, entityCount: Int) {
        guard isComplete else { return }
        if let last = spans.last, last.transactionID >= changeset.transactionID { isSorted = false }
        var keys: [UInt32: [UInt64]] = [:]
        for operation in changeset.operations {
            let object = operation.object
            guard object.storeIndex == 0, Int(object.entityIndex) < entityCount else {
                firstWindowTransactions.insert(changeset.transactionID)
                continue
            }
            keys[object.entityIndex, default: []].append(object.key)
        }
        for (entity, touched) in keys.sorted(by: { $0.key < $1.key }) {
            for range in Self.ranges(of: touched.sorted(), atMost: Self.maxRangesPerEntity) {
                spans.append(Span(transactionID: changeset.transactionID, entity: entity, keys: range))
            }
        }
        if spans.count > Self.maxSpanCount || !isSorted {
            spans = []
            firstWindowTransactions = []
            isComplete = false
        }
    }

    static let maxRangesPerEntity = 32

    /// At most `limit` ranges that cover the ascending `keys`: keys closer than a gap join one range, the gap
    /// growing until the ranges are few enough.
    static func ranges(of keys: [UInt64], atMost limit: Int) -> [ClosedRange<UInt64>] {
        var gap: UInt64 = 1
        while true {
            var ranges: [ClosedRange<UInt64>] = []
            for key in keys {
                if let last = ranges.last, key - last.upperBound <= gap {
                    ranges[ranges.count - 1] = last.lowerBound...key
                } else {
                    ranges.append(key...key)
                }
            }
            if ranges.count <= limit { return ranges }
            let (wider, overflow) = gap.multipliedReportingOverflow(by: 8)
            gap = overflow ? .max : wider
        }
    }

    /// Whether a window's pass must decode transaction `id` (false only when it is known not to touch the window).
    func mayTouch(_ id: UInt64, _ window: MigrationWindow) -> Bool {
        if let checkpointTransactionID, id <= checkpointTransactionID { return false }
        guard isComplete else { return true }
        if window.isFirst, firstWindowTransactions.contains(id) { return true }
        // The first span of `id` (spans are in transaction order).
        var low = 0
        var high = spans.count
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].transactionID < id { low = middle + 1 } else { high = middle }
        }
        while low < spans.count, spans[low].transactionID == id {
            if window.overlaps(entity: spans[low].entity, spans[low].keys) { return true }
            low += 1
        }
        return false
    }
}
