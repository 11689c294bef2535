import LogFormat

/// A column's references — its to-one targets by slot, or the spans of its to-many targets — held as their keys
/// alone (8 bytes each) while every one names the same store and entity, and in full (16 bytes each) once two
/// differ.
///
/// A relationship's targets usually are of one entity of the referencing store (a post's author, its tags), so the
/// store and entity index every ``ObjectReference`` carries were half of a column's references: h91 counted 83 MB of
/// references in big1m's replayed state, written by the replay and read again by its digest. The first reference
/// stored decides the shared store and entity; one that differs (a destination entity with subentities, an object
/// of another store) turns the storage into full references once, for good. Readers get ``ObjectReference``s
/// either way: by position, as an array, or as a buffer that is unpacked on the stack (``withReferences(in:_:)``).
struct ReferenceStorage: Sendable {
    private enum Layout: Equatable {
        /// Nothing but fillers held yet (see ``store(_:at:)``): ``keys`` holds them.
        case undecided
        /// Every reference held names this store and entity; ``keys`` holds their keys.
        case shared(storeIndex: UInt32, entityIndex: UInt32)
        /// ``references`` holds every reference in full (``keys`` is empty).
        case full
    }

    private var layout = Layout.undecided
    private var keys: [UInt64] = []
    private var references: [ObjectReference] = []

    /// The number of references held (fillers included).
    var count: Int { layout == .full ? references.count : keys.count }

    /// Whether no reference is held.
    var isEmpty: Bool { count == 0 }

    /// How many references fit without reallocating, in the present layout.
    var capacity: Int { layout == .full ? references.capacity : keys.capacity }

    /// The bytes its arrays hold on the heap (their capacities).
    var heapByteCount: Int {
        keys.capacity &* MemoryLayout<UInt64>.stride &+ references.capacity &* MemoryLayout<ObjectReference>.stride
    }

    /// The reference at a position (a filler reads as some reference: its slot's tag says it holds none).
    @inline(__always)
    subscript(position: Int) -> ObjectReference {
        layout == .full ? references[position] : Self.reference(layout, key: keys[position])
    }

    /// Stores `reference` at `position`, first appending fillers up to it (the positions of slots that hold no
    /// reference).
    @inline(__always)
    mutating func store(_ reference: ObjectReference, at position: Int) {
        if holdsKeys(of: reference) {
            Column.pad(&keys, to: position, with: 0)
            keys[position] = reference.key
        } else {
            Column.pad(&references, to: position, with: ObjectReference(entityIndex: 0, key: 0))
            references[position] = reference
        }
    }

    /// Appends `list`; an array whose capacity was reserved from a prediction (`isReserved`) grows past it as
    /// ``Swift/Array/growPastReservation(adding:isReserved:)`` says.
    mutating func append(contentsOf list: UnsafeBufferPointer<ObjectReference>, isReserved: inout Bool) {
        guard let first = list.first else { return }
        if holdsKeys(of: first) {
            if list.allSatisfy({ sharesLayout($0, with: first) }) {
                keys.growPastReservation(adding: list.count, isReserved: &isReserved)
                // One append per key: `append(contentsOf: list.lazy.map(\.key))` went through the generic sequence
                // copy, whose set-up cost more than the copy for the usual list of two or three (`egctl replay`'s
                // profile: 3 % of the applying thread).
                for reference in list { keys.append(reference.key) }
                return
            }
            widen()
        }
        references.growPastReservation(adding: list.count, isReserved: &isReserved)
        references.append(contentsOf: list)
    }

    /// Appends the references at `range` of `other`.
    mutating func append(_ range: Range<Int>, of other: ReferenceStorage) {
        var isReserved = false
        other.withReferences(in: range) { append(contentsOf: $0, isReserved: &isReserved) }
    }

    /// Whether the references at `range` are `list`'s, in order.
    func holds(_ list: UnsafeBufferPointer<ObjectReference>, in range: Range<Int>) -> Bool {
        guard range.count == list.count else { return false }
        if layout == .full { return references[range].elementsEqual(list) }
        return zip(range, list).allSatisfy { position, reference in self[position] == reference }
    }

    /// The references at `range`, as an array.
    func array(in range: Range<Int>) -> [ObjectReference] {
        if layout == .full { return Array(references[range]) }
        return range.map { self[$0] }
    }

    /// Calls `body` with the references at `range` in a buffer: the held array's when they are held in full,
    /// otherwise a temporary one (on the stack for a short list) they are unpacked into.
    @inline(__always)
    func withReferences<R>(in range: Range<Int>, _ body: (UnsafeBufferPointer<ObjectReference>) -> R) -> R {
        withUnsafePointer(to: self) { Self.withReferences(of: $0, in: range, body) }
    }

    /// ``withReferences(in:_:)`` of the storage at `storage`, read in place: called on a storage reached through a
    /// pointer (`column.pointee.manyTargets`), the method copied it first — a retain and a release of its arrays per
    /// list the digest read (h108's profile).
    @inline(__always)
    static func withReferences<R>(
        of storage: UnsafePointer<ReferenceStorage>, in range: Range<Int>,
        _ body: (UnsafeBufferPointer<ObjectReference>) -> R
    ) -> R {
        let layout = storage.pointee.layout
        // The buffers' addresses are taken in closures that call nothing and used after them (as
        // `ByteArena.withBytes(of:at:_:)` does): the storage at `storage` is the caller's, alive and unchanged while
        // it reads.
        if layout == .full {
            let references = storage.pointee.references.withUnsafeBufferPointer { $0 }
            return body(UnsafeBufferPointer(rebasing: references[range]))
        }
        if range.isEmpty { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        let keys = UnsafeBufferPointer(rebasing: storage.pointee.keys.withUnsafeBufferPointer { $0 }[range])
        return withUnsafeTemporaryAllocation(of: ObjectReference.self, capacity: keys.count) { buffer in
            for (offset, key) in keys.enumerated() {
                buffer.initializeElement(at: offset, to: reference(layout, key: key))
            }
            return body(UnsafeBufferPointer(buffer))
        }
    }

    /// The reference at a position of the storage at `storage`, read in place (see
    /// ``withReferences(of:in:_:)``).
    @inline(__always)
    static func reference(of storage: UnsafePointer<ReferenceStorage>, at position: Int) -> ObjectReference {
        let layout = storage.pointee.layout
        if layout == .full { return storage.pointee.references[position] }
        return reference(layout, key: storage.pointee.keys[position])
    }

    /// The reference a key held in `layout` (not ``Layout/full``) stands for.
    @inline(__always)
    private static func reference(_ layout: Layout, key: UInt64) -> ObjectReference {
        switch layout {
        case .shared(let storeIndex, let entityIndex):
            return ObjectReference(storeIndex: storeIndex, entityIndex: entityIndex, key: key)
        case .full, .undecided: return ObjectReference(entityIndex: 0, key: key)
        }
    }

    /// Replaces the store index of every reference with `storeIndices[storeIndex]` (see
    /// ``Column/renumberingStores(_:)``).
    mutating func renumberStores(_ storeIndices: [UInt32]) {
        switch layout {
        case .undecided: return
        case .shared(let storeIndex, let entityIndex):
            layout = .shared(storeIndex: Self.renumbered(storeIndex, storeIndices), entityIndex: entityIndex)
        case .full: Self.renumberStores(of: &references, storeIndices)
        }
    }

    /// Replaces the store index of every reference in `references` with `storeIndices[storeIndex]`.
    static func renumberStores(of references: inout [ObjectReference], _ storeIndices: [UInt32]) {
        for position in references.indices {
            references[position].storeIndex = renumbered(references[position].storeIndex, storeIndices)
        }
    }

    private static func renumbered(_ storeIndex: UInt32, _ storeIndices: [UInt32]) -> UInt32 {
        precondition(Int(storeIndex) < storeIndices.count, "a column names store \(storeIndex) its table lacks")
        return storeIndices[Int(storeIndex)]
    }

    /// Reserves room for `count` references in the layout `other` has (full references when `other`'s are).
    mutating func reserveCapacity(_ count: Int, like other: ReferenceStorage) {
        if other.layout == .full {
            widen()
            references.reserveCapacity(count)
        } else if layout == .full {
            references.reserveCapacity(count)
        } else {
            keys.reserveCapacity(count)
        }
    }

    /// Drops the growth slack (see ``ByteArena/shrinkToFit(_:)``).
    mutating func shrinkToFit() {
        ByteArena.shrinkToFit(&keys)
        ByteArena.shrinkToFit(&references)
    }

    /// Whether `reference` is held as its key (deciding the shared store and entity when none is yet); when not,
    /// the storage holds full references from now on.
    @inline(__always)
    private mutating func holdsKeys(of reference: ObjectReference) -> Bool {
        switch layout {
        case .shared(let storeIndex, let entityIndex):
            if reference.storeIndex == storeIndex && reference.entityIndex == entityIndex { return true }
            widen()
            return false
        case .full: return false
        case .undecided:
            layout = .shared(storeIndex: reference.storeIndex, entityIndex: reference.entityIndex)
            return true
        }
    }

    @inline(__always)
    private func sharesLayout(_ reference: ObjectReference, with first: ObjectReference) -> Bool {
        reference.storeIndex == first.storeIndex && reference.entityIndex == first.entityIndex
    }

    /// Turns held keys into full references (their capacity kept, so that a reservation still holds).
    private mutating func widen() {
        guard layout != .full else { return }
        var full: [ObjectReference] = []
        full.reserveCapacity(keys.capacity)
        for position in keys.indices { full.append(self[position]) }
        references = full
        keys = []
        layout = .full
    }
}
