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
    private(set) var targets = ReferenceStorage()
    /// To-many targets: each slot's span of ``manyTargets``.
    private(set) var manyStarts: [UInt32] = []
    private(set) var manyCounts: [UInt32] = []
    private(set) var manyTargets = ReferenceStorage()
    private var manyGarbageCount = 0
    /// Whether ``manyTargets``' capacity was reserved from a prediction and not outgrown yet (see
    /// ``ReservedGrowth``).
    private var manyTargetsAreReserved = false
    /// To-many lists of at least ``largeListCount`` targets (a tag's or a category's list of every post), each in
    /// its own array by slot, marked by ``largeListMarker`` in ``manyCounts``: read, written and compared as one
    /// shared array. In ``manyTargets`` every read of such a list copied it, every write appended all of it again
    /// and compared it element by element, so each relate that added one post cost several passes over the list.
    private(set) var largeLists: [Int: [ObjectReference]] = [:]
    /// For lists in ``largeLists``, a key no target's key exceeds (kept by ``editMany(at:_:)``, so that a relate
    /// that appends newer objects to a tag's list of every post need not scan the list for its largest key; `nil`
    /// until a first edit scans it).
    private var largeListKeyBounds: [Int: UInt64] = [:]
    /// UUIDs and blob references, which are rare enough not to need an array per slot.
    private(set) var others: [Int: AttributeValue] = [:]

    /// The tag of a slot.
    @inline(__always)
    func tag(at slot: Int) -> ValueTag { slot < tags.count ? tags[slot] : .absent }

    /// The to-many lists of at least this many targets have an array of their own (see ``largeLists``).
    static let largeListCount = 64
    /// What ``manyCounts`` holds for a slot whose list is in ``largeLists``.
    static let largeListMarker = UInt32.max

    /// A slot's list in ``largeLists``. Not inlined: a dictionary access inlined into a read makes the compiler copy
    /// the whole column (a retain and a release of each storage) for every read of every kind.
    @inline(never)
    func largeList(at slot: Int) -> [ObjectReference] { largeLists[slot] ?? [] }

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

    /// Makes room, in a new column about to be decoded from a checkpoint chunk, for `slotCount` slots filled as
    /// `shape` says a chunk of `shapeSlotCount` slots was (see ``DecodedChunkShape``): tags for every slot, words when
    /// it held fixed-width values, its arena's bytes and slots scaled to `slotCount`, its bytes a sixty-fourth more
    /// (see ``ReservedGrowth``).
    mutating func reserveCapacity(slotCount: Int, like shape: DecodedChunkShape.ColumnShape, of shapeSlotCount: Int) {
        tags.reserveCapacity(slotCount)
        if shape.usesWords { words.reserveCapacity(slotCount) }
        guard shape.arenaSlotCount > 0, shapeSlotCount > 0 else { return }
        let byteCount = shape.arenaByteCount * slotCount / shapeSlotCount
        let arenaSlotCount = min(slotCount, (shape.arenaSlotCount * slotCount + shapeSlotCount - 1) / shapeSlotCount)
        arena.reserveCapacity(byteCount: ReservedGrowth.reservation(for: byteCount), slotCount: arenaSlotCount)
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
        if slot == words.count {
            // A new object's slot, just after the last one: one append, not a filler overwritten.
            words.append(word)
        } else {
            Self.pad(&words, to: slot, with: 0)
            words[slot] = word
        }
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
            // A new object's slot, just after the last one: one append (a filler appended, then overwritten, cost a
            // second uniqueness check per value of a replay).
            if slot == tags.count { return tags.append(tag) }
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

extension AttributeValue {
    fileprivate var isUUID: Bool {
        if case .uuid = self { return true }
        return false
    }
}
