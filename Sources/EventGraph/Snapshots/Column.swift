internal import CPrefetch
import LogFormat

/// The values of one property over the slots of one chunk.
///
/// Each slot's ``ValueTag`` says which storage holds its value: fixed-width values as bit patterns in a typed
/// array, strings and small binaries in a ``ByteArena``, to-one targets by slot in a ``ReferenceStorage``, to-many
/// targets as a span of another (8 bytes a reference while they name one store and entity). Storages are allocated
/// when the first value of their kind arrives, and every one is a Swift array, so a copy of the column shares them
/// until one is written (copy-on-write per storage).
struct Column: Sendable {
    private(set) var tags: [ValueTag] = []
    /// Bit patterns of fixed-width values (see ``AttributeValue/fixedWidthEncoding``).
    private(set) var words: [UInt64] = []
    private(set) var arena = ByteArena()
    /// To-one targets, by slot.
    private var targets = ReferenceStorage()
    /// To-many targets: each slot's span of ``manyTargets``.
    private var manyStarts: [UInt32] = []
    private var manyCounts: [UInt32] = []
    private(set) var manyTargets = ReferenceStorage()
    private var manyGarbageCount = 0
    /// Whether ``manyTargets``' capacity was reserved from a prediction and not outgrown yet (see
    /// ``ReservedGrowth``).
    private var manyTargetsAreReserved = false
    /// To-many lists of at least ``largeListCount`` targets (a tag's or a category's list of every post), each in
    /// its own array by slot, marked by ``largeListMarker`` in ``manyCounts``: read, written and compared as one
    /// shared array. In ``manyTargets`` every read of such a list copied it, every write appended all of it again
    /// and compared it element by element, so each relate that added one post cost several passes over the list.
    private var largeLists: [Int: [ObjectReference]] = [:]
    /// For lists in ``largeLists``, a key no target's key exceeds (kept by ``editMany(at:_:)``, so that a relate
    /// that appends newer objects to a tag's list of every post need not scan the list for its largest key; `nil`
    /// until a first edit scans it).
    private var largeListKeyBounds: [Int: UInt64] = [:]
    /// UUIDs and blob references, which are rare enough not to need an array per slot.
    private var others: [Int: AttributeValue] = [:]

    /// The tag of a slot.
    @inline(__always)
    func tag(at slot: Int) -> ValueTag { slot < tags.count ? tags[slot] : .absent }

    /// The value of a slot; `nil` when the slot is absent.
    ///
    /// Inlined, so that a caller reads only the storage the slot's tag names: called out of line on a column reached
    /// through an array or a pointer, it made the caller copy the whole column first (a retain and a release of each
    /// storage, per value: `outlined init with copy of Column` under every row built, in profiles of commits and
    /// compaction).
    @inline(__always)
    func value(at slot: Int) -> PropertyValue? {
        let tag = tag(at: slot)
        switch tag {
        case .absent: return nil
        case .null: return .attribute(.null)
        case .int16, .int32, .int64, .double, .float, .bool, .date:
            return .attribute(AttributeValue(fixedWidth: tag, words[slot]))
        case .string, .url, .decimal, .binary, .transformable:
            let isASCII = arena.isASCII
            return .attribute(arena.withBytes(at: slot) { AttributeValue(bytes: tag, $0, isKnownASCII: isASCII) })
        case .uuid, .blob: return .attribute(Self.otherValue(in: others, at: slot))
        case .toOneNil: return .toOne(nil)
        case .toOne: return .toOne(targets[slot])
        case .toMany:
            let count = manyCounts[slot]
            if count == Self.largeListMarker { return .toMany(largeList(at: slot)) }
            let start = Int(manyStarts[slot])
            return .toMany(manyTargets.array(in: start..<start + Int(count)))
        }
    }

    /// The to-many lists of at least this many targets have an array of their own (see ``largeLists``).
    static let largeListCount = 64
    /// What ``manyCounts`` holds for a slot whose list is in ``largeLists``.
    private static let largeListMarker = UInt32.max

    /// A slot's list in ``largeLists``. Not inlined: a dictionary access inlined into a read makes the compiler copy
    /// the whole column (a retain and a release of each storage) for every read of every kind.
    @inline(never)
    private func largeList(at slot: Int) -> [ObjectReference] { largeLists[slot] ?? [] }

    /// The attribute value of a slot (`.null` for an absent slot or a relationship), decoded straight from its
    /// storage without building a ``PropertyValue``: every property read of a handle comes here.
    @inline(__always)
    func attributeValue(at slot: Int) -> AttributeValue { attributeValueUnlessRelationship(at: slot) ?? .null }

    /// The attribute value of a slot (`.null` for an absent slot), `nil` for a relationship: what
    /// ``value(at:)`` wraps in ``PropertyValue/attribute(_:)``, decoded without building it.
    @inline(__always)
    func attributeValueUnlessRelationship(at slot: Int) -> AttributeValue? {
        withUnsafePointer(to: self) { Self.attributeValueUnlessRelationship(of: $0, at: slot) }
    }

    /// ``attributeValueUnlessRelationship(at:)`` of the column at `column`, read in place: every property read of a
    /// handle comes here (``ChunkSlot`` reads its columns through the array's buffer).
    ///
    /// Static, over a pointer, because a method of the column called on a value the compiler cannot prove unchanged
    /// for the call (an array element, a pointee) made it copy the whole column first (a retain and a release of
    /// each of its storages): 'outlined init with copy of Column' under `storedValue(at:)` in profiles of fetch-all.
    @inline(__always)
    static func attributeValueUnlessRelationship(of column: UnsafePointer<Column>, at slot: Int) -> AttributeValue? {
        let tag = slot < column.pointee.tags.count ? column.pointee.tags[slot] : .absent
        switch tag {
        case .int16, .int32, .int64, .double, .float, .bool, .date:
            return AttributeValue(fixedWidth: tag, column.pointee.words[slot])
        case .string, .url, .decimal, .binary, .transformable: return bytesValue(of: column, tag, at: slot)
        case .uuid, .blob: return otherValue(in: column.pointee.others, at: slot)
        case .absent, .null: return .null
        case .toOneNil, .toOne, .toMany: return nil
        }
    }

    /// A string or binary value from the arena; not inlined, so that the closure does not grow every read.
    @inline(never)
    private static func bytesValue(of column: UnsafePointer<Column>, _ tag: ValueTag, at slot: Int) -> AttributeValue {
        // Text of an arena whose every byte is ASCII is copied without being validated (see `AttributeValue.text`).
        let isASCII = column.pointee.arena.isASCII
        return withArenaBytes(of: column, at: slot) { bytes in
            // The bytes start loading before the value's storage is allocated, instead of when they are copied into
            // it: a lookup by ID reads bytes that are not in the cache.
            if let start = bytes.baseAddress { eg_prefetch(start) }
            return AttributeValue(bytes: tag, bytes, isKnownASCII: isASCII)
        }
    }

    /// Starts loading, without waiting, what a read of a slot of the column at `column` reads first: its tag and
    /// the slot's entries of the storages a value may be in (a fixed-width word, an arena's offset and length). A
    /// lookup by ID issues them for the property it expects to be read while it makes the fault (see
    /// ``ObjectContext/object(with:)``), so that the read waits for one cache miss, its bytes, instead of two.
    @inline(__always)
    static func prefetchValue(of column: UnsafePointer<Column>, at slot: Int) {
        column.pointee.tags.prefetchElement(at: slot)
        column.pointee.words.prefetchElement(at: slot)
        ByteArena.prefetchOffsets(of: arenaPointer(of: column), at: slot)
    }

    /// Starts loading, without waiting, the bytes of a slot's string or binary value in the column at `column`
    /// (nothing for other values): a lookup by ID issues them for the property it expects to be read once it found
    /// the slot, before it makes the fault, whose read then finds them arriving (see ``ByteArena/prefetchBytes(of:at:)``).
    @inline(__always)
    static func prefetchBytes(of column: UnsafePointer<Column>, at slot: Int) {
        ByteArena.prefetchBytes(of: arenaPointer(of: column), at: slot)
    }

    /// Where a column's arena lies in it.
    private static let arenaOffset = MemoryLayout<Column>.offset(of: \Column.arena)!

    /// Calls `body` with the arena bytes of a slot of the column at `column`, read in place (see
    /// ``ByteArena/withBytes(of:at:_:)``: `column.pointee.arena.withBytes` copies the arena first).
    @inline(__always)
    static func withArenaBytes<R>(
        of column: UnsafePointer<Column>, at slot: Int, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        ByteArena.withBytes(of: arenaPointer(of: column), at: slot, body)
    }

    /// The arena of the column at `column`, in place.
    @inline(__always)
    private static func arenaPointer(of column: UnsafePointer<Column>) -> UnsafePointer<ByteArena> {
        UnsafeRawPointer(column).advanced(by: arenaOffset).assumingMemoryBound(to: ByteArena.self)
    }

    /// Calls `body` with each slot that holds a blob reference, in no particular order (a checkpoint collects the
    /// external values it copies without decoding any other value).
    func forEachBlob(_ body: (_ slot: Int, _ reference: BlobReference) -> Void) {
        for (slot, value) in others where tag(at: slot) == .blob {
            if case .blob(let reference) = value { body(slot, reference) }
        }
    }

    /// A UUID or blob reference. Not inlined: a dictionary access inlined into a read makes the compiler copy the
    /// whole column (a retain and a release of each storage) for every read of every kind. It takes the dictionary,
    /// not the column: a method of the column called out of line made every inlined read copy the column too.
    @inline(never)
    private static func otherValue(in others: [Int: AttributeValue], at slot: Int) -> AttributeValue { others[slot]! }

    /// How many to-many targets the column stores (spans no slot uses any more included): a bound on what its
    /// lists take in a checkpoint.
    var storedManyTargetCount: Int { largeLists.values.reduce(manyTargets.count) { $0 + $1.count } }

    /// The tag of a slot of the column at `column`, read in place (``tag(at:)`` called on an array element or a
    /// pointee copies the whole column first).
    @inline(__always)
    static func tag(of column: UnsafePointer<Column>, at slot: Int) -> ValueTag {
        slot < column.pointee.tags.count ? column.pointee.tags[slot] : .absent
    }

    /// The target of a slot tagged ``ValueTag/toOne`` of the column at `column`, read in place.
    @inline(__always)
    static func toOneTarget(of column: UnsafePointer<Column>, at slot: Int) -> ObjectReference {
        ReferenceStorage.reference(of: storagePointer(of: column, at: targetsOffset), at: slot)
    }

    /// Where a column's to-one targets and its to-many spans lie in it.
    private static let targetsOffset = MemoryLayout<Column>.offset(of: \Column.targets)!
    private static let manyTargetsOffset = MemoryLayout<Column>.offset(of: \Column.manyTargets)!

    /// A reference storage of the column at `column`, in place (`column.pointee.targets` read through a method is
    /// copied first: its arrays retained and released per read).
    @inline(__always)
    private static func storagePointer(
        of column: UnsafePointer<Column>, at offset: Int
    ) -> UnsafePointer<ReferenceStorage> {
        UnsafeRawPointer(column).advanced(by: offset).assumingMemoryBound(to: ReferenceStorage.self)
    }

    /// The UUID or blob reference of a slot tagged ``ValueTag/uuid`` or ``ValueTag/blob`` of the column at `column`.
    static func otherValue(of column: UnsafePointer<Column>, at slot: Int) -> AttributeValue {
        otherValue(in: column.pointee.others, at: slot)
    }

    /// Calls `body` with the targets of a slot tagged ``ValueTag/toMany`` of the column at `column`, in place (no
    /// array is made for them: a checkpoint encodes them from here).
    @inline(__always)
    static func withManyTargets<R>(
        of column: UnsafePointer<Column>, at slot: Int, _ body: (UnsafeBufferPointer<ObjectReference>) -> R
    ) -> R {
        let count = column.pointee.manyCounts[slot]
        if count == largeListMarker {
            return column.pointee.largeList(at: slot).withUnsafeBufferPointer(body)
        }
        let start = Int(column.pointee.manyStarts[slot])
        let storage = storagePointer(of: column, at: manyTargetsOffset)
        return ReferenceStorage.withReferences(of: storage, in: start..<start + Int(count), body)
    }

    /// The column with the store index of every reference it holds replaced by `storeIndices[storeIndex]`: a store's
    /// references in another table of stores (a coordinator reads a chunk of a store whose numbering differs from its
    /// own once per chunk version, not once per object). Every other storage is shared, not copied.
    func renumberingStores(_ storeIndices: [UInt32]) -> Column {
        var renumbered = self
        renumbered.targets.renumberStores(storeIndices)
        renumbered.manyTargets.renumberStores(storeIndices)
        for slot in largeLists.keys {
            ReferenceStorage.renumberStores(of: &renumbered.largeLists[slot]!, storeIndices)
        }
        return renumbered
    }

    /// Makes room, in a new column, for `slotCount` slots filled as `full` (the same property's column in the
    /// chunk before, full) is: each storage that `full` uses reserved for every slot, its arena for `full`'s live
    /// bytes and its to-many span array for `full`'s live targets, a sixty-fourth more each (see
    /// ``ReservedGrowth``). Objects appended one after another (a replay's or a bulk save's inserts) then fill every
    /// storage without reallocating it along the way (doubling copied each array about once more and faulted in its
    /// pages again).
    mutating func reserveCapacity(slotCount: Int, like full: Column) {
        tags.reserveCapacity(slotCount)
        if !full.words.isEmpty { words.reserveCapacity(slotCount) }
        if !full.targets.isEmpty { targets.reserveCapacity(slotCount, like: full.targets) }
        if !full.manyCounts.isEmpty {
            manyStarts.reserveCapacity(slotCount)
            manyCounts.reserveCapacity(slotCount)
        }
        let liveTargetCount = full.manyTargets.count - full.manyGarbageCount
        if liveTargetCount > 0 {
            manyTargets.reserveCapacity(ReservedGrowth.reservation(for: liveTargetCount), like: full.manyTargets)
            manyTargetsAreReserved = true
        }
        if !full.arena.starts.isEmpty {
            let byteCount = ReservedGrowth.reservation(for: full.arena.liveByteCount)
            arena.reserveCapacity(byteCount: byteCount, slotCount: slotCount)
        }
    }

    /// Drops the growth slack of every storage (see ``ByteArena/shrinkToFit()``): for a column just decoded from a
    /// checkpoint chunk, which no commit has written yet.
    mutating func shrinkToFit() {
        ByteArena.shrinkToFit(&tags)
        ByteArena.shrinkToFit(&words)
        arena.shrinkToFit()
        targets.shrinkToFit()
        ByteArena.shrinkToFit(&manyStarts)
        ByteArena.shrinkToFit(&manyCounts)
        manyTargets.shrinkToFit()
    }

    /// The bytes its storages hold on the heap (their capacities; the dictionaries at an estimate per entry): what
    /// a decoded chunk costs the cache of decoded checkpoint chunks (``DecodedChunkCache``).
    var heapByteCount: Int {
        func bytes<Element>(_ array: [Element]) -> Int { array.capacity &* MemoryLayout<Element>.stride }
        var total = bytes(tags) &+ bytes(words) &+ arena.heapByteCount &+ targets.heapByteCount
        total &+= bytes(manyStarts) &+ bytes(manyCounts) &+ manyTargets.heapByteCount
        for list in largeLists.values { total &+= bytes(list) &+ 48 }
        return total &+ others.count &* 64
    }

    /// Stores the value of a slot; an unchanged value writes nothing, so a copy of the column keeps sharing the
    /// storages a commit did not change.
    mutating func set(_ value: PropertyValue?, at slot: Int) {
        let old = tag(at: slot)
        guard let value else { return setTag(.absent, at: slot, old: old) }
        switch value {
        case .attribute(let attribute):
            if let (tag, word) = attribute.fixedWidthEncoding { return set(word: word, tag: tag, at: slot) }
            if attribute.withBytesEncoding({ tag, bytes in set(bytes: bytes, tag: tag, at: slot) }) != nil { return }
            switch attribute {
            case .null: return setTag(.null, at: slot, old: old)
            case .uuid, .blob:
                if let current = others[slot], current == attribute, old != .absent { return }
                others[slot] = attribute
                return setTag(attribute.isUUID ? .uuid : .blob, at: slot, old: old)
            default: preconditionFailure("\(attribute) has no column storage")
            }
        case .toOne(nil):
            setTag(.toOneNil, at: slot, old: old)
        case .toOne(let target?):
            set(target: target, at: slot)
        case .toMany(let list):
            if old == .toMany, holdsMany(list, at: slot) { return }
            setMany(list, at: slot, old: old)
            setTag(.toMany, at: slot, old: old)
        }
    }

    /// Stores a fixed-width value of a slot as its tag and bit pattern (see ``AttributeValue/fixedWidthEncoding``):
    /// what ``set(_:at:)-(PropertyValue?,_)`` does with such a value, for a caller that has them without an
    /// ``AttributeValue`` (a replayed changeset, a prepared default).
    ///
    /// - Precondition: `tag` is fixed-width (``ValueTag/isFixedWidth``).
    @inline(__always)
    mutating func set(word: UInt64, tag: ValueTag, at slot: Int) {
        let old = self.tag(at: slot)
        if old == tag && words[slot] == word { return }
        Self.pad(&words, to: slot, with: 0)
        words[slot] = word
        setTag(tag, at: slot, old: old)
    }

    /// Stores a value that is its tag alone: ``ValueTag/null`` or ``ValueTag/toOneNil``.
    @inline(__always)
    mutating func set(valueOfTagAlone tag: ValueTag, at slot: Int) {
        precondition(tag == .null || tag == .toOneNil, "\(tag) is not a value of its tag alone")
        setTag(tag, at: slot, old: self.tag(at: slot))
    }

    /// Stores the target of a to-one relationship of a slot.
    @inline(__always)
    mutating func set(target: ObjectReference, at slot: Int) {
        let old = tag(at: slot)
        if old == .toOne && targets[slot] == target { return }
        targets.store(target, at: slot)
        setTag(.toOne, at: slot, old: old)
    }

    /// Stores the targets of a to-many relationship of a slot from a buffer (a replayed changeset's, without an
    /// array per list): what ``set(_:at:)-(PropertyValue?,_)`` does with `.toMany` of the same targets.
    mutating func set(manyTargets list: UnsafeBufferPointer<ObjectReference>, at slot: Int) {
        let old = tag(at: slot)
        if old == .toMany, holdsMany(list, at: slot) { return }
        if list.count >= Self.largeListCount {
            setMany(Array(list), at: slot, old: old)
        } else {
            Self.pad(&manyStarts, to: slot, with: 0)
            Self.pad(&manyCounts, to: slot, with: 0)
            if old == .toMany { releaseMany(at: slot) }
            appendSpan(list, at: slot)
        }
        setTag(.toMany, at: slot, old: old)
    }

    /// Stores a prepared value of a slot: what ``set(_:at:)`` does with the value it was prepared from, without
    /// going through ``PropertyValue`` for the common defaults (null, a fixed-width value, a string, no to-one target,
    /// an empty to-many list).
    @inline(__always)
    mutating func set(_ value: PreparedColumnValue, at slot: Int) {
        let old = tag(at: slot)
        switch value {
        case .tag(let tag): setTag(tag, at: slot, old: old)
        case .word(let tag, let word): set(word: word, tag: tag, at: slot)
        case .bytes(let tag, let bytes): bytes.withUnsafeBytes { set(bytes: $0, tag: tag, at: slot) }
        case .emptyMany:
            // A list in `largeLists` is never empty, so a count of 0 is an empty list held (`holdsMany([])`).
            if old == .toMany && manyCounts[slot] == 0 { return }
            setMany([], at: slot, old: old)
            setTag(.toMany, at: slot, old: old)
        case .value(let value): set(value, at: slot)
        }
    }

    /// Edits a to-many slot's list in place (a replayed relate): a list with an array of its own is moved out of
    /// ``largeLists``, edited and put back, so that adding one target to a tag's list of every post copies the list
    /// at most once per chunk version (when another version still shares it), not once per relate.
    ///
    /// `edit` gets the list and a key none of its targets' keys exceeds (`nil`: not known), and returns such a key
    /// for the edited list (`nil`: not known), which the column keeps for a long list's next edit.
    ///
    /// - Precondition: the slot holds a to-many list.
    mutating func editMany(at slot: Int, _ edit: (inout [ObjectReference], _ keyBound: UInt64?) -> UInt64?) {
        precondition(tag(at: slot) == .toMany, "slot \(slot) holds no to-many list")
        guard manyCounts[slot] == Self.largeListMarker else {
            let range = spanRange(slot)
            var list = manyTargets.array(in: range)
            _ = edit(&list, nil)
            return set(.toMany(list), at: slot)
        }
        var list = largeLists.removeValue(forKey: slot) ?? []
        let bound = edit(&list, largeListKeyBounds[slot])
        if list.count >= Self.largeListCount {
            largeLists[slot] = list
            largeListKeyBounds[slot] = bound
        } else {
            setMany(list, at: slot, old: .toMany)
        }
    }

    /// Stores a byte value (a string's UTF-8, a binary's bytes) of a slot straight from `bytes`: what ``set(_:at:)``
    /// does with a byte value, for a decoder that has the bytes and no value (a checkpoint chunk decoded in place).
    ///
    /// - Parameter isASCII: whether every byte is below 0x80, when the caller already knows (a replayed changeset's
    ///   decoder found out while it had the bytes in cache); `nil` has the arena check.
    /// - Precondition: `tag` is a byte tag (``ValueTag/isBytes``).
    mutating func set(bytes: UnsafeRawBufferPointer, tag: ValueTag, at slot: Int, isASCII: Bool? = nil) {
        let old = self.tag(at: slot)
        if old != tag || !arena.holds(bytes, at: slot) { arena.set(bytes, at: slot, isASCII: isASCII) }
        setTag(tag, at: slot, old: old)
    }

    /// The span of a slot's list in ``manyTargets`` (empty for a list in ``largeLists``).
    private func spanRange(_ slot: Int) -> Range<Int> {
        let count = manyCounts[slot]
        guard count != Self.largeListMarker else { return 0..<0 }
        let start = Int(manyStarts[slot])
        return start..<start + Int(count)
    }

    /// Whether a to-many slot holds exactly `list` (the counts are compared first: a relate changes them).
    private func holdsMany(_ list: [ObjectReference], at slot: Int) -> Bool {
        list.withUnsafeBufferPointer { holdsMany($0, at: slot) }
    }

    /// Whether a to-many slot holds exactly the targets in `list`.
    private func holdsMany(_ list: UnsafeBufferPointer<ObjectReference>, at slot: Int) -> Bool {
        guard manyCounts[slot] == Self.largeListMarker else {
            let range = spanRange(slot)
            return manyTargets.holds(list, in: range)
        }
        let current = largeList(at: slot)
        guard current.count == list.count else { return false }
        return current.withUnsafeBufferPointer { mine in
            mine.baseAddress == list.baseAddress || mine.elementsEqual(list)
        }
    }

    /// Lets go of a to-many slot's list: its span becomes garbage, or its own array is released.
    private mutating func releaseMany(at slot: Int) {
        if manyCounts[slot] == Self.largeListMarker {
            largeLists[slot] = nil
            largeListKeyBounds[slot] = nil
        } else {
            manyGarbageCount += Int(manyCounts[slot])
        }
        manyCounts[slot] = 0
    }

    private mutating func setMany(_ list: [ObjectReference], at slot: Int, old: ValueTag) {
        Self.pad(&manyStarts, to: slot, with: 0)
        Self.pad(&manyCounts, to: slot, with: 0)
        if old == .toMany { releaseMany(at: slot) }
        if list.count >= Self.largeListCount {
            // Shared with the row it came from: no copy now, and none when it is read back.
            largeLists[slot] = list
            manyStarts[slot] = 0
            manyCounts[slot] = Self.largeListMarker
            return
        }
        list.withUnsafeBufferPointer { appendSpan($0, at: slot) }
    }

    /// Gives a slot (whose old list was let go of) a span of ``manyTargets`` holding `list`, a short list.
    private mutating func appendSpan(_ list: UnsafeBufferPointer<ObjectReference>, at slot: Int) {
        if manyGarbageCount > 1024 && manyGarbageCount > manyTargets.count / 2 { compactMany(excluding: slot) }
        precondition(manyTargets.count + list.count <= Int(UInt32.max), "a chunk's to-many targets exceed 2^32")
        manyStarts[slot] = UInt32(manyTargets.count)
        manyCounts[slot] = UInt32(list.count)
        manyTargets.append(contentsOf: list, isReserved: &manyTargetsAreReserved)
    }

    private mutating func compactMany(excluding excluded: Int) {
        var fresh = ReferenceStorage()
        fresh.reserveCapacity(manyTargets.count - manyGarbageCount, like: manyTargets)
        for slot in manyStarts.indices where manyCounts[slot] != Self.largeListMarker {
            let range = tag(at: slot) == .toMany && slot != excluded ? spanRange(slot) : 0..<0
            manyStarts[slot] = UInt32(fresh.count)
            manyCounts[slot] = UInt32(range.count)
            fresh.append(range, of: manyTargets)
        }
        manyTargets = fresh
        manyGarbageCount = 0
    }

    /// Writes a slot's tag and lets go of the storage its old value was in, when that differs.
    private mutating func setTag(_ tag: ValueTag, at slot: Int, old: ValueTag) {
        if old != tag {
            if old.isBytes && !tag.isBytes { arena.clear(at: slot) }
            if (old == .uuid || old == .blob) && tag != .uuid && tag != .blob { others[slot] = nil }
            if old == .toMany { releaseMany(at: slot) }
        }
        if slot >= tags.count {
            if tag == .absent { return }
            Self.pad(&tags, to: slot, with: .absent)
        }
        if tags[slot] != tag { tags[slot] = tag }
    }

    /// Appends `filler` up to `slot`, when `array` does not reach it.
    static func pad<T>(_ array: inout [T], to slot: Int, with filler: T) {
        // The usual case, a new object's slot just after the last one, appends one element (appending a repeated
        // element took the generic path, a few percent of a replay).
        if slot == array.count {
            array.append(filler)
        } else if slot > array.count {
            array.append(contentsOf: repeatElement(filler, count: slot + 1 - array.count))
        }
    }
}

/// A property value prepared once for being written into many slots (a replayed insert's defaults): the common
/// defaults as a tag, a bit pattern or bytes, anything else (a UUID, a relationship with targets) as the value.
enum PreparedColumnValue: Sendable {
    /// A value that is its tag alone: null, or a to-one relationship without a target.
    case tag(ValueTag)
    /// A fixed-width value (see ``AttributeValue/fixedWidthEncoding``).
    case word(ValueTag, UInt64)
    /// A byte value (a string's UTF-8, a binary's bytes).
    case bytes(ValueTag, [UInt8])
    /// An empty to-many list.
    case emptyMany
    /// Any other value, written as ``Column/set(_:at:)-(PropertyValue?,_)`` writes it.
    case value(PropertyValue)

    init(_ value: PropertyValue) {
        switch value {
        case .attribute(let attribute):
            if let (tag, word) = attribute.fixedWidthEncoding {
                self = .word(tag, word)
            } else if let (tag, bytes) = attribute.withBytesEncoding({ ($0, Array($1)) }) {
                self = .bytes(tag, bytes)
            } else if case .null = attribute {
                self = .tag(.null)
            } else {
                self = .value(value)
            }
        case .toOne(nil): self = .tag(.toOneNil)
        case .toMany(let list) where list.isEmpty: self = .emptyMany
        default: self = .value(value)
        }
    }
}

extension AttributeValue {
    fileprivate var isUUID: Bool {
        if case .uuid = self { return true }
        return false
    }
}
