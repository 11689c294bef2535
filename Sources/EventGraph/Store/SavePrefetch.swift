internal import CPrefetch
import LogFormat

/// Prefetches for the passes of a large save over its new objects, issued some objects ahead of the one a pass is at.
///
/// A bulk save's passes — validation with the building of each insert, staging, the uniqueness check, installation
/// and `finishSave` — each walk the save's 100,000 new objects, whose values the setters wrote long before and which
/// do not fit in the cache: every pass finds each object's values cold. What a pass reads of one object is a chain
/// of loads the hardware cannot guess — the object (or its staged row), then its array of values, then what the
/// values point to (a string's bytes, a to-many list's buffer) — so each object waited for several cache misses one
/// after the other (h94 and h100: skipping a read in one pass only moved its miss to the next). A pass asks for
/// these a step at a time, a few objects ahead: the first link at ``firstLinkDistance``, the values' array at
/// ``valuesDistance`` (its address is in the cache by then), what the values point to at ``storageDistance``, so
/// that the misses of several objects overlap each other and the pass's own work.
///
/// A hint only: a prefetch never faults, whatever the address, and nothing a pass computes depends on one. The
/// addresses are read from the arrays' and strings' own fields without calling into the runtime (no retain, no
/// load of the memory being asked for).
enum SavePrefetch {
    /// How far ahead a pass asks for the first link of the chain: the object, or the staged row.
    static var firstLinkDistance: Int { 12 }
    /// How far ahead a pass asks for an object's array of values.
    static var valuesDistance: Int { 8 }
    /// How far ahead a pass asks for what the values point to.
    static var storageDistance: Int { 4 }
    /// The most elements of an array of values asked for (a bulk insert's post has 8).
    private static var valueCountBound: Int { 8 }
    /// The most cache lines of one string asked for (the hardware follows the rest of a copy).
    private static var stringLineBound: Int { 5 }
    /// The size of a native string's object before its UTF-8 bytes.
    private static var stringHeaderByteCount: Int { 32 }
    /// The size of a Swift array's header before its elements (the count and the capacity, after the object's).
    private static var arrayHeaderByteCount: Int { 32 }

    /// Starts loading `lineCount` cache lines from `address`.
    @inline(__always)
    static func prefetch(_ address: UnsafeRawPointer, lineCount: Int) {
        for line in 0..<lineCount { eg_prefetch(address + line &* 64) }
    }

    /// An array's elements, for a prefetch: taken in a closure that calls nothing, so that the array is neither
    /// retained nor released for it (its owner keeps it alive while the pass runs). A caller that uses only the
    /// address does not read the buffer: the load of the count is dead and left out by the optimizer.
    @inline(__always)
    static func elements<Element>(of array: [Element]) -> UnsafeBufferPointer<Element> {
        array.withUnsafeBufferPointer { $0 }
    }

    /// Starts loading an array of values from its elements' address (``elements(of:)``): its header and its first
    /// elements (up to ``valueCountBound``).
    @inline(__always)
    static func prefetchValues(at elements: UnsafePointer<PropertyChange>?) {
        guard let elements else { return }
        let byteCount = arrayHeaderByteCount + valueCountBound * MemoryLayout<PropertyChange>.stride
        prefetch(UnsafeRawPointer(elements) - arrayHeaderByteCount, lineCount: (byteCount + 63) / 64)
    }

    /// Starts loading the header of an array from its elements' address (``elements(of:)``): what its release
    /// reads and writes.
    @inline(__always)
    static func prefetchHeader<Element>(at elements: UnsafePointer<Element>?) {
        guard let elements else { return }
        eg_prefetch(UnsafeRawPointer(elements) - arrayHeaderByteCount)
    }

    /// Starts loading what the values in `changes` point to: when `lists`, each to-many list's buffer; when
    /// `strings`, each string too long to be held in the value itself (its header and its first bytes). The
    /// elements should be in the cache (asked for at ``valuesDistance``): they are read here.
    @inline(__always)
    static func prefetchStorage(of changes: UnsafeBufferPointer<PropertyChange>, lists: Bool, strings: Bool) {
        guard lists || strings else { return }
        for position in changes.indices {
            guard let found = storage(of: changes[position].value, lists: lists, strings: strings) else { continue }
            prefetch(found.address, lineCount: found.lineCount)
        }
    }

    /// Where the storage a value points to starts, and how many of its cache lines to ask for; `nil` for a value
    /// that points to none (or a string whose bytes are in the value). Calls nothing, so that the value is read in
    /// place, not copied (a retain would wait for the very cache line asked for).
    @inline(__always)
    private static func storage(of value: PropertyValue, lists: Bool, strings: Bool)
        -> (address: UnsafeRawPointer, lineCount: Int)?
    {
        switch value {
        case .attribute(.string(let text)), .attribute(.url(let text)):
            guard strings, let bytes = text.utf8.withContiguousStorageIfAvailable({ $0 }), bytes.count > 15,
                let start = bytes.baseAddress
            else { return nil }
            // A native string's bytes follow its object's header and capacity (32 bytes), which a copy of the
            // string writes (a retain).
            let object = UnsafeRawPointer(start) - stringHeaderByteCount
            return (object, Swift.min(stringLineBound, (stringHeaderByteCount + bytes.count) / 64 + 2))
        case .toMany(let targets):
            guard lists, let start = elements(of: targets).baseAddress else { return nil }
            return (UnsafeRawPointer(start) - arrayHeaderByteCount, 2)
        default:
            return nil
        }
    }

    /// Issues a pass's prefetches at `position` of a save's operations (staging, the ownership check): the values
    /// of the insert ``valuesDistance`` ahead, and what those of the one ``storageDistance`` ahead point to. The
    /// operations themselves are one array, read in order (the hardware prefetches it).
    @inline(__always)
    static func prefetchAhead(
        in operations: UnsafeBufferPointer<ChangeOperation>, from position: Int, lists: Bool, strings: Bool
    ) {
        let values = position &+ valuesDistance
        let valuesStart = values < operations.count ? insertedChanges(of: operations[values]).baseAddress : nil
        let storage = position &+ storageDistance
        let stored =
            storage < operations.count
            ? insertedChanges(of: operations[storage]) : UnsafeBufferPointer(start: nil, count: 0)
        prefetchValues(at: valuesStart)
        prefetchStorage(of: stored, lists: lists, strings: strings)
    }

    /// Issues a pass's prefetches at `position` of a save's staged changes (the uniqueness check, installation):
    /// the row ``firstLinkDistance`` ahead, the changes its new object's values are read from of the one
    /// ``valuesDistance`` ahead, and what those of the one ``storageDistance`` ahead point to.
    @inline(__always)
    static func prefetchAhead(
        in changes: UnsafeBufferPointer<StagedChanges.Change>, from position: Int, lists: Bool, strings: Bool
    ) {
        let first = position &+ firstLinkDistance
        let row = first < changes.count ? changes[first].row.map { Unmanaged.passUnretained($0).toOpaque() } : nil
        let values = position &+ valuesDistance
        let valuesStart = values < changes.count ? insertedChanges(of: changes[values].row).baseAddress : nil
        let storage = position &+ storageDistance
        let stored =
            storage < changes.count
            ? insertedChanges(of: changes[storage].row) : UnsafeBufferPointer(start: nil, count: 0)
        if let row { prefetch(UnsafeRawPointer(row), lineCount: 2) }
        prefetchValues(at: valuesStart)
        prefetchStorage(of: stored, lists: lists, strings: strings)
    }

    /// The changes of an insert (empty for another operation), for a prefetch (see ``elements(of:)``).
    @inline(__always)
    private static func insertedChanges(of operation: ChangeOperation) -> UnsafeBufferPointer<PropertyChange> {
        guard case .insert(_, let changes) = operation else { return UnsafeBufferPointer(start: nil, count: 0) }
        return elements(of: changes)
    }

    /// The changes a new object's row reads its values from (empty for another row), for a prefetch.
    @inline(__always)
    private static func insertedChanges(of row: Row?) -> UnsafeBufferPointer<PropertyChange> {
        guard let row, case .inserted(let inserted) = row.values.storage else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        return elements(of: inserted.changes)
    }
}
