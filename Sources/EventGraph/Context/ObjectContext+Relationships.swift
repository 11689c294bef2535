import LogFormat

/// Inverse maintenance and delete propagation: both sides of a relationship change together, in memory, so
/// that a save records both sides explicitly.
extension ObjectContext {
    func setRelationship(of object: ManagedObject, at index: Int, to targets: [ManagedObject]) {
        // The relationship's link, not its description: a bulk insert sets relationships of every new object, and
        // a description copy retains its names each time.
        guard let relationship = object.entity.relationshipLinks[index] else {
            preconditionFailure("\(object.entity.name).\(object.entity.properties[index].name) is not a relationship")
        }
        precondition(relationship.isToMany || targets.count <= 1, "a to-one relationship takes at most one object")
        let destinationIndex = relationship.destinationEntityIndex
        var newReferences: [ObjectReference] = []
        newReferences.reserveCapacity(targets.count)
        // The targets without repeats, in order, kept as objects (the inverses are attached to them directly):
        // `targets` itself unless it repeats one, so that the usual call allocates no second array.
        var repeatFree: [ManagedObject]?
        // A few targets (a post's tags) are told apart from the earlier ones by comparing, more by hashing.
        let isHashed = targets.count > 8
        var seen: Set<ObjectIdentity> = []
        for (position, target) in targets.enumerated() {
            // One load of the weak reference when the target is in a context (the usual case), two otherwise.
            if target.contextStorage !== self {
                if target.contextStorage == nil { insert(target) }
                precondition(target.contextStorage === self, "\(target) belongs to another context than \(object)")
            }
            precondition(!target.isDeleted, "\(target) is deleted and cannot be related to \(object)")
            precondition(
                target.entity.index == destinationIndex || target.entity.isKindOf(model.entities[destinationIndex]),
                "\(object.entity.name).\(object.entity.properties[index].name) takes "
                    + "\(model.entities[destinationIndex].name) objects, not \(target.entity.name)")
            let identity = target.identity
            let isNew =
                isHashed ? seen.insert(identity).inserted : !targets[..<position].contains { $0.identity == identity }
            if isNew {
                newReferences.append(reference(to: target))
                repeatFree?.append(target)
            } else if repeatFree == nil {
                repeatFree = Array(targets[..<position])
            }
        }
        let newTargets = repeatFree ?? targets
        let oldReferences = object.currentValue(at: index)?.references ?? []
        if oldReferences.isEmpty {
            // Nothing to keep or detach (a new object's relationships): every target is added.
            object.setPendingValue(
                relationship.isToMany ? .toMany(newReferences) : .toOne(newReferences.first), at: index)
            guard let inverseIndex = relationship.inverseIndex else { return }
            for target in newTargets { attach(object, to: target, at: inverseIndex, forwardIndex: index) }
            return
        }
        if !isHashed { seen = Set(newTargets.lazy.map(\.identity)) }
        if relationship.isToMany {
            // Targets in unmounted stores were not among those the app read, so they are not among those it set.
            for kept in oldReferences where unmountedStore(of: kept) != nil && seen.insert(kept.identity).inserted {
                newReferences.append(kept)
            }
        }
        object.setPendingValue(relationship.isToMany ? .toMany(newReferences) : .toOne(newReferences.first), at: index)
        guard let inverseIndex = relationship.inverseIndex else { return }
        let oldIdentities = Set(oldReferences.map(\.identity))
        for removed in oldReferences where !seen.contains(removed.identity) {
            detach(object, from: self.object(for: removed), at: inverseIndex)
        }
        for added in newReferences where !oldIdentities.contains(added.identity) {
            attach(object, to: self.object(for: added), at: inverseIndex, forwardIndex: index)
        }
    }

    /// Removes `source` from `target`'s relationship at `index`.
    func detach(_ source: ManagedObject, from target: ManagedObject, at index: Int) {
        if noteUnmounted(target, at: index) { return }
        // Decide first, in a scope of its own, so that no copy of the target's list is alive while it is edited.
        let isPresentInToMany: Bool
        do {
            guard let value = target.currentValue(at: index) else { return }
            switch value {
            case .toOne(let reference) where reference?.identity == source.identity:
                target.setPendingValue(.toOne(nil), at: index)
                return
            case .toMany(let references):
                isPresentInToMany = references.contains { $0.identity == source.identity }
            default:
                return
            }
        }
        if isPresentInToMany {
            let identity = source.identity
            target.modifyPendingToMany(at: index) { $0.removeAll { $0.identity == identity } }
        }
    }

    /// Adds `source` to `target`'s relationship at `index` (the inverse of `source`'s relationship at
    /// `forwardIndex`); a to-one inverse first releases its previous target.
    func attach(_ source: ManagedObject, to target: ManagedObject, at index: Int, forwardIndex: Int) {
        if noteUnmounted(target, at: index) { return }
        // The model says whether the inverse is to-many: the target's list is not read (and retained) for that.
        guard let link = target.entity.relationshipLinks[index] else { return }
        if link.isToMany {
            // An object inserted in this context cannot be in a committed list, and the forward side adds it once,
            // so the linear membership test is only needed for objects that existed before. It is decided first, in
            // a scope of its own, so that no copy of the target's list is alive while it is edited.
            if !source.flags.contains(.isInserted) {
                guard case .toMany(let references) = target.currentValue(at: index) ?? .toMany([]) else { return }
                if references.contains(where: { $0.identity == source.identity }) { return }
            }
            let added = reference(to: source)
            if source.flags.contains(.isInserted), canDeferInverseAppend(to: target) {
                deferInverseAppend(added, to: target, at: index)
                return
            }
            target.modifyPendingToMany(at: index) { $0.append(added) }
            return
        }
        switch target.currentValue(at: index) ?? target.entity.defaultValues[index] {
        case .toMany:
            break
        case .toOne(let previous):
            guard previous?.identity != source.identity else { return }
            if let previous {
                detach(target, from: object(for: previous), at: forwardIndex)
            }
            target.setPendingValue(.toOne(reference(to: source)), at: index)
        case .attribute:
            break
        }
    }

    // MARK: - Inverse appends held back

    /// Whether an append to `target`'s to-many inverse may be held back until `target`'s unsaved values are next
    /// read or written (see ``deferInverseAppend(_:to:at:)``): `target` is new, holds unsaved values already (so
    /// that every read of its values goes through ``ManagedObject/pending``), has no committed values that could
    /// change meanwhile, and is in none of the states an edit of its list checks (fault, staged for a save in
    /// progress, deleted, detached).
    @inline(__always)
    private func canDeferInverseAppend(to target: ManagedObject) -> Bool {
        let flags = target.flags
        return flags.contains(.isInserted)
            && flags.isDisjoint(with: [.isFault, .isStagedForSave, .isDeleted, .isDead, .isProbe])
            && target.hasPendingValues && !target.hasCommittedValues && target.detachment == nil
    }

    /// Holds back the append of `reference` to `target`'s to-many relationship at `index`.
    ///
    /// A bulk insert relates each new object to a few of many targets (a post to one of 1,000 authors and three of
    /// 1,000 tags): appending to the target's list at once touches the target's unsaved values and its list, cold
    /// in the cache by then, for every object (the biggest cost of the relationship setters, h78's and h83's
    /// profiles). Held back, the appends are written one after the other, and applied a target at a time (see
    /// ``applyDeferredInverseAppends()``) when any object they concern reads or writes its unsaved values (its
    /// ``ManagedObject/pending`` accessor), and before a save, a rollback, a reset or the context's release. The
    /// target is held by ``insertedList`` until then, so the entry does not retain it.
    private func deferInverseAppend(_ reference: ObjectReference, to target: ManagedObject, at index: Int) {
        target.hasDeferredInverseAppends = true
        deferredInverseAppends.append(
            DeferredInverseAppend(target: Unmanaged.passUnretained(target), reference: reference, index: Int32(index)))
    }

    /// Applies the held-back inverse appends (see ``deferInverseAppend(_:to:at:)``): those of each target's
    /// relationship together, in the order they were made, as one edit of its list.
    ///
    /// No buffer here is as large as the appends together: each pair's references go to a list of their own, sized
    /// exactly, that becomes the target's list when it had none. (One array of every append, ≈ 16 MB at 400k, was
    /// an mmapped block whose free raised glibc's mmap threshold: later large blocks came from the heap, and peak
    /// RSS grew, h89.)
    func applyDeferredInverseAppends() {
        guard !deferredInverseAppends.isEmpty else { return }
        var appends = deferredInverseAppends
        deferredInverseAppends = DeferredInverseAppends()
        // The (target, relationship) pairs in order of first appearance, each append's pair and each pair's count.
        var groupOfPair = ProbingTable<DeferredInverseAppend.PairGroup>()
        var pairs: [DeferredInverseAppend] = []
        var counts: [Int] = []
        appends.forEachInPlace { append in
            let pair = DeferredInverseAppend.Pair(
                target: UInt(bitPattern: append.target.toOpaque()), index: append.index)
            let group: Int32
            if let found = groupOfPair[pair] {
                group = found.group
            } else {
                group = Int32(truncatingIfNeeded: pairs.count)
                groupOfPair.update(DeferredInverseAppend.PairGroup(key: pair, group: group))
                pairs.append(append)
                counts.append(0)
            }
            counts[Int(group)] += 1
            append.group = group
        }
        // Each pair's references in a list of its own, in order.
        var lists = counts.map { count in
            var list: [ObjectReference] = []
            list.reserveCapacity(count)
            return list
        }
        appends.forEachInPlace { lists[Int($0.group)].append($0.reference) }
        appends = DeferredInverseAppends()
        // Every target's flag is cleared first: the edits below read the targets' values through `pending`.
        for pair in pairs { pair.target.takeUnretainedValue().hasDeferredInverseAppends = false }
        for (group, pair) in pairs.enumerated() {
            pair.target.takeUnretainedValue().modifyPendingToMany(at: Int(pair.index)) { references in
                if references.isEmpty {
                    swap(&references, &lists[group])
                } else {
                    references.append(contentsOf: lists[group])
                }
            }
            lists[group] = []
        }
    }

    // MARK: - Deleting

    /// Deletes an object at the next save, applying delete rules now: `nullify` removes it from its targets'
    /// inverses, `cascade` also deletes the targets, `deny` is checked at save, `noAction` does nothing.
    public func delete(_ object: ManagedObject) {
        precondition(object.contextStorage === self, "\(object) does not belong to this context")
        guard !object.flags.contains(.isDeleted), !object.flags.contains(.isDead) else { return }
        if object.flags.contains(.isFault) { object.fireFault() }
        object.flags.insert(.isDeleted)
        deletedList.append(object)
        for property in object.entity.properties {
            guard let relationship = property.relationship else { continue }
            guard relationship.deleteRule == .nullify || relationship.deleteRule == .cascade else { continue }
            let targets = objects(for: object.currentValue(at: relationship.index)?.references ?? [])
            if let inverseIndex = relationship.inverseIndex {
                // An inverse in an unmounted store is cleaned up when the store is mounted again.
                for target in targets where !target.flags.contains(.isDead) && !isInUnmountedStore(target) {
                    detach(object, from: target, at: inverseIndex)
                }
            }
            if relationship.deleteRule == .cascade {
                for target in targets where !target.flags.contains(.isDead) { delete(target) }
            }
        }
    }
}

/// An append to a new object's to-many inverse that its context holds back (see
/// `ObjectContext.deferInverseAppend(_:to:at:)`).
struct DeferredInverseAppend {
    /// The object whose list gets the reference: not retained (the context's ``ObjectContext/insertedList`` holds it).
    let target: Unmanaged<ManagedObject>
    let reference: ObjectReference
    /// The index of the target's relationship.
    let index: Int32
    /// The append's (target, relationship) pair, numbered while they are applied (in the padding: no memory).
    var group: Int32 = 0

    /// A target's relationship, the unit the appends are applied in.
    struct Pair: Equatable {
        /// The target's address (never 0: that marks an empty place of ``PairGroup``'s table).
        let target: UInt
        let index: Int32
    }

    /// A pair and the number of its group, in a ``ProbingTable``: an append looks its pair up once, and a bulk
    /// insert makes hundreds of thousands. The keys are addresses of live objects, not values a file or a user
    /// chooses, so a fixed multiplicative hash needs none of `Hasher`'s seeding and SipHash rounds (they were half
    /// of ``ObjectContext/applyDeferredInverseAppends()`` in a bulk insert's profile); the table's own seeding
    /// still bounds a pile-up.
    struct PairGroup: ProbingTableEntry {
        let key: Pair
        let group: Int32

        static var empty: PairGroup { PairGroup(key: Pair(target: 0, index: 0), group: 0) }
        var isEmpty: Bool { key.target == 0 }

        @inline(__always)
        static func hash(_ key: Pair) -> UInt64 {
            (UInt64(key.target) ^ (UInt64(UInt32(bitPattern: key.index)) << 48)) &* 0x9E37_79B9_7F4A_7C15
        }
    }
}

/// The appends a context holds back (see `ObjectContext.deferInverseAppend(_:to:at:)`), in order, in blocks of
/// under 64 KiB: a bulk insert holds hundreds of thousands, and one array of them all was an mmapped block whose
/// free raised glibc's mmap threshold (see `ObjectContext.applyDeferredInverseAppends()`).
struct DeferredInverseAppends {
    /// The entries a block holds at most (2,048 of 32 bytes).
    static let blockCapacity = 65_536 / MemoryLayout<DeferredInverseAppend>.stride
    /// Full blocks, then the block being filled (never an empty one).
    private(set) var blocks: [[DeferredInverseAppend]] = []

    var isEmpty: Bool { blocks.isEmpty }

    /// The number of appends held.
    var count: Int { blocks.reduce(0) { $0 + $1.count } }

    mutating func append(_ entry: DeferredInverseAppend) {
        let last = blocks.count - 1
        if last >= 0, blocks[last].count < Self.blockCapacity {
            blocks[last].append(entry)
            return
        }
        // The first block grows as the appends come (a save of a few inserts holds a few); later ones are reserved
        // whole.
        var block: [DeferredInverseAppend] = []
        if last >= 0 { block.reserveCapacity(Self.blockCapacity) }
        block.append(entry)
        blocks.append(block)
    }

    /// Calls `body` with each entry, in order, for an edit in place.
    mutating func forEachInPlace(_ body: (inout DeferredInverseAppend) -> Void) {
        for block in blocks.indices {
            blocks[block].withUnsafeMutableBufferPointer { entries in
                for position in entries.indices { body(&entries[position]) }
            }
        }
    }
}
