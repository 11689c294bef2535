internal import CPrefetch
import LogFormat

extension Column {
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

    /// The bytes its storages hold on the heap (their capacities; the dictionaries at an estimate per entry): what
    /// a decoded chunk costs the cache of decoded checkpoint chunks (``DecodedChunkCache``).
    var heapByteCount: Int {
        func bytes<Element>(_ array: [Element]) -> Int { array.capacity &* MemoryLayout<Element>.stride }
        var total = bytes(tags) &+ bytes(words) &+ arena.heapByteCount &+ targets.heapByteCount
        total &+= bytes(manyStarts) &+ bytes(manyCounts) &+ manyTargets.heapByteCount
        for list in largeLists.values { total &+= bytes(list) &+ 48 }
        return total &+ others.count &* 64
    }
}
