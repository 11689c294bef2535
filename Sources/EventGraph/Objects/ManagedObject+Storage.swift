import LogFormat

/// The paths that property wrappers and the dynamic API use to read and write values.
extension ManagedObject {
    /// The unsaved value of a property, if one was set.
    @inline(__always)
    final func pendingValue(at index: Int) -> PropertyValue? {
        if !hasPendingValues { return nil }
        for entry in pending where entry.index == index { return entry.value }
        return nil
    }

    /// Whether the unsaved value of an attribute is null (or not an attribute value), read in place; `nil` when the
    /// object holds no unsaved value for it.
    ///
    /// Validation's required check asks only this of most attributes: reading the value (``pendingValue(at:)``)
    /// copies it, and the copy of a string retains its storage, cold in the cache by the save of a bulk insert
    /// (≈ 4 % of the saving thread's CPU in h94's profile, one retain and release per required attribute and object).
    /// h94 measured that this alone moved the first touch of the strings to the next pass that copied them, the
    /// insert; that pass shares the object's values now (``insertChanges()``), and copies none.
    final func pendingAttributeIsNull(at index: Int) -> Bool? {
        if !hasPendingValues { return nil }
        return pending.withUnsafeBufferPointer { entries in
            for position in entries.indices where entries[position].index == index {
                switch entries[position].value {
                case .attribute(.null): return true
                case .attribute: return false
                case .toOne, .toMany: return true
                }
            }
            return nil
        }
    }

    /// The current value of a property: unsaved, else committed; `nil` for a new object's unset property.
    @inline(__always)
    final func currentValue(at index: Int) -> PropertyValue? {
        if let value = pendingValue(at: index) { return value }
        if flags.contains(.isFault) { fireFault(readingIndex: index) }
        // A slot's columns are read in place, and a checkpoint chunk's through the context's cache, not under its
        // box's lock (a relationship's read comes here; see `HeldSlotColumns`).
        if let columns = committedColumns, index < Int(columns.readableCount),
            let base = columns.base ?? checkpointColumns(of: columns, reading: index)
        {
            return columns.value(at: index, in: base)
        }
        return committed?.value(at: index)
    }

    /// The current attribute value in its public form, for ``Attribute``'s inlined accessor.
    @usableFromInline
    final func storedValue(at index: Int) -> StoredValue? {
        storedAttributeValue(at: index).map(StoredValue.init)
    }

    /// The default of an attribute, for ``Attribute``'s inlined accessor when the object holds no value for it.
    ///
    /// The wrappers keep no default (see `PrototypeCapture`): it is the entity's, or the class's before the object
    /// is inserted. A default computed per object (`Date()`) is this object's own: made on the first read of a new
    /// object (and kept as its unsaved value, so every read and the insert see the same one) or when it is inserted.
    @usableFromInline @inline(never)
    final func defaultStoredValue(at index: Int) -> StoredValue {
        if let entityStorage, !entityStorage.hasInstanceDefaults, entityStorage.objectClass == type(of: self),
            let attribute = entityStorage.properties[index].attribute
        {
            return attribute.defaultValue
        }
        let info = ClassRegistry.info(for: type(of: self))
        guard info.dynamicDefaultIndices.contains(index), !flags.contains(.isProbe) else {
            return info.defaultValues[index]
        }
        guard let fresh = info.freshDynamicDefaults()[index] else { return info.defaultValues[index] }
        if contextStorage == nil, detachment == nil, !flags.contains(.isDead), pendingValue(at: index) == nil {
            setPendingValue(.attribute(fresh), at: index)
        }
        return StoredValue(fresh)
    }

    /// Sets an attribute value given in its public form as an unsaved change, for ``Attribute``'s inlined accessor;
    /// `keyPath` is the property's own (`\Post.title`), which a probe records instead (see
    /// `PropertyKeyPathResolver`).
    ///
    /// Only the setter passes its key path on: a getter that used its key path at all (even only for a probe) made
    /// the runtime produce it on every read, and made the compiler check exclusive access to the wrapper at run time
    /// wherever the key path escapes (see ``PropertyStamps``).
    @usableFromInline
    final func setStoredValue(_ value: StoredValue, at index: Int, through keyPath: AnyKeyPath) {
        if flags.contains(.isProbe) {
            probedKeyPath = keyPath
            return
        }
        setPendingValue(.attribute(value.attributeValue), at: index)
    }

    /// The current attribute value, with externally stored bytes read on demand.
    @inline(__always)
    final func storedAttributeValue(at index: Int) -> AttributeValue? {
        let value: AttributeValue
        if let columns = committedColumns, index < Int(columns.readableCount), !hasPendingValues,
            !flags.contains(.isProbe), let base = columns.base ?? checkpointColumns(of: columns, reading: index)
        {
            // The committed value read in place: the slot's columns are not copied out of the object, nor taken
            // from a checkpoint chunk's box under its lock (see `HeldSlotColumns`).
            if flags.contains(.isFault) { clearFault(reading: index) }
            guard let held = columns.attributeValueUnlessRelationship(at: index, in: base) else { return nil }
            value = held
        } else if !hasPendingValues, let committed, !flags.contains(.isProbe) {
            // The committed value, as `currentValue` reads it (firing a fault that holds its row only clears the
            // flag), decoded without building a `PropertyValue`: this runs for every property read.
            if flags.contains(.isFault) { clearFault(reading: index) }
            guard let committedValue = committed.attributeValueUnlessRelationship(at: index) else { return nil }
            value = committedValue
        } else {
            guard case .attribute(let current) = currentValue(at: index) else { return nil }
            value = current
        }
        if case .blob(let reference) = value { return externalValue(reference, at: index) }
        return value
    }

    /// The columns of the checkpoint chunk that `columns` reads through its box, from the context's cache (see
    /// ``CheckpointColumnsCache``); `nil` for held columns, and without a context (the read goes through the box).
    ///
    /// The context is used as guaranteed (it outlives the read: it clears ``contextStorage`` before it goes), and a
    /// hit only reads its fields: a strong reference to it cost a retain and a release per property read. A miss
    /// loads it again, out of line.
    @inline(__always)
    private final func checkpointColumns(of columns: HeldSlotColumns, reading index: Int) -> UnsafePointer<Column>? {
        guard let address = columns.checkpointChunkAddress, let context = contextReference else { return nil }
        let lookup = context._withUnsafeGuaranteedRef { $0.checkpointColumns.lookUp(address, reading: index) }
        switch lookup {
        case .hit(let base): return base
        case .noColumn: return nil
        case .miss: return takeCheckpointColumns(at: address, reading: index)
        }
    }

    /// Makes the context's cache hold the columns of the checkpoint chunk whose box is at `address` (see
    /// ``checkpointColumns(of:reading:)``).
    @inline(never)
    private final func takeCheckpointColumns(at address: UnsafeRawPointer, reading index: Int) -> UnsafePointer<Column>?
    {
        contextStorage?.checkpointColumns.take(address, reading: index)
    }

    /// Clears the fault flag of an object that holds its committed values, on a read of property `index`; a fault
    /// that a lookup by ID made tells its context which property its first read is (out of line: the read of a
    /// fetched object keeps no more than the bit test).
    @inline(__always)
    private final func clearFault(reading index: Int) {
        if flags.contains(.isLookedUpByID) { noteFirstReadOfLookedUpObject(at: index) }
        flags.remove(.isFault)
    }

    /// Tells the context that the first read of a fault it looked up by ID was property `index` (see
    /// ``ObjectContext/noteFirstRead(ofProperty:entityIndex:)``).
    @inline(never)
    private final func noteFirstReadOfLookedUpObject(at index: Int) {
        flags.remove(.isLookedUpByID)
        contextStorage?.noteFirstRead(ofProperty: index, entityIndex: entity.index)
    }

    /// Sets an attribute value as an unsaved change.
    final func setStoredAttributeValue(_ value: AttributeValue, at index: Int) {
        setPendingValue(.attribute(value), at: index)
    }

    /// Edits a to-many value in place: when it is already pending, its array is mutated without being copied (a tag
    /// with 100k posts must not be copied for every post added to it); otherwise the committed list is copied once.
    final func modifyPendingToMany(at index: Int, _ body: (inout [ObjectReference]) -> Void) {
        precondition(!flags.contains(.isDead), "\(self) was deleted and can no longer be changed")
        if detachment != nil { stopIfContextReleased(index, changing: true) }
        if flags.contains(.isFault) { fireFault() }
        if flags.contains(.isStagedForSave) { noteChangeAfterStaging() }
        // One access to the pending values, not one per read and write of them (an inverse kept up to date as
        // objects are inserted edits a tag's list once per post).
        let isEdited = pending.withUnsafeMutableBufferPointer { pending in
            for position in pending.indices where pending[position].index == index {
                guard case .toMany(var references) = pending[position].value else { return false }
                pending[position].value = .toOne(nil)  // drop the pending entry's reference so `references` is unique
                body(&references)
                pending[position].value = .toMany(references)
                return true
            }
            return false
        }
        if isEdited { return }
        var references: [ObjectReference] = []
        if case .toMany(let committed) = committed?.value(at: index) ?? entity.defaultValues[index] {
            references = committed
        }
        body(&references)
        setPendingValue(.toMany(references), at: index)
    }

    final func setPendingValue(_ value: PropertyValue, at index: Int) {
        precondition(!flags.contains(.isDead), "\(self) was deleted and can no longer be changed")
        if detachment != nil { stopIfContextReleased(index, changing: true) }
        if flags.contains(.isFault) { fireFault() }
        if flags.contains(.isStagedForSave) { noteChangeAfterStaging() }
        for position in pending.indices where pending[position].index == index {
            pending[position].value = value
            return
        }
        if pending.isEmpty { pending.reserveCapacity(8) }
        pending.append(PendingValue(index: index, value: value))
        if !flags.contains(.isListedAsChanged), !flags.contains(.isInserted), let context = contextStorage {
            flags.insert(.isListedAsChanged)
            context.objectDidChange(self)
        }
    }

    /// What a save's insert of this new object lists: its persistent unsaved values that differ from their defaults,
    /// in property order.
    ///
    /// When every unsaved value is such a value (a new object whose setters set persistent properties to values
    /// other than their defaults, as a bulk insert's do), that is the object's own array, sorted in place and shared
    /// with the insert: no array is built, no value copied, and the save that clears the unsaved values frees none of
    /// them (the insert and the saved row hold them). Each copy retained a string's storage, cold in the cache by a bulk
    /// insert's save, and each release at the end of the save touched it again. A later change of the object copies
    /// the array first, so the insert keeps the values it was built with.
    final func insertChanges() -> [PropertyChange] {
        let entity = self.entity
        let persistent = entity.isPersistentProperty
        let defaults = entity.defaultValues
        var isSorted = true
        let listsEveryValue = pending.withUnsafeBufferPointer { entries in
            for position in entries.indices {
                let index = entries[position].index
                if position > 0, entries[position - 1].propertyIndex > entries[position].propertyIndex {
                    isSorted = false
                }
                guard persistent[index], entries[position].value != defaults[index] else { return false }
            }
            return true
        }
        if listsEveryValue {
            // The order of unsaved values means nothing to their readers (each property is held once).
            if !isSorted { pending.sort { $0.propertyIndex < $1.propertyIndex } }
            return pending
        }
        // By position, not `for entry in pending`: each value is retained once, by its change, not also by a copy of
        // its entry.
        let pending = self.pending
        var changes: [PropertyChange] = []
        changes.reserveCapacity(pending.count)
        for position in pending.indices {
            let index = pending[position].index
            guard persistent[index], pending[position].value != defaults[index] else { continue }
            changes.append(pending[position])
        }
        changes.sort { $0.propertyIndex < $1.propertyIndex }
        return changes
    }

    /// Notes that a save's validation changed this object after its insert operation was built (see
    /// ``Flags/isStagedForSave``).
    @inline(never)
    private final func noteChangeAfterStaging() {
        flags.remove(.isStagedForSave)
        contextStorage?.changedAfterStaging.append(self)
    }

    /// Loads the committed row, if it is not already held.
    @inline(never)
    final func fireFault(readingIndex index: Int? = nil) {
        if flags.contains(.isProbe) {
            probedIndex = index
            if index != nil { probedReads += 1 }
            return
        }
        guard let context = contextStorage else {
            // Without a row, an object whose context was released would read as its defaults.
            if committed == nil { stopIfContextReleased(index) }
            flags.remove(.isFault)
            return
        }
        flags.remove(.isFault)
        guard committed == nil else { return }
        fulfilFault(with: context.parentStore.committedRow(of: identity, entityIndex: entity.index))
    }

    /// Fulfils a fault with its committed row `found`, looked up beforehand (`nil`: the object no longer exists in
    /// the store, and reads as its defaults); an object that holds its row already keeps it.
    @inline(__always)
    final func fulfilFault(with found: CommittedRow?) {
        flags.remove(.isFault)
        guard committed == nil else { return }
        if let found {
            committed = found.values
        } else {
            row = Row(entityIndex: entity.index, key: identity.key, version: 0, values: entity.defaultValues)
        }
    }

    @inline(never)
    final func externalValue(_ reference: BlobReference, at index: Int) -> AttributeValue {
        if let loaded = extras?.loadedBlobs[index] { return loaded }
        guard let context = contextStorage else {
            stopIfContextReleased(index)
            return .null
        }
        var reference = reference
        do {
            while true {
                if let bytes = try context.parentStore.readBlob(reference, inStore: identity.storeIndex) {
                    let isTransformable = entity.properties[index].attribute?.type == .transformable
                    let value: AttributeValue = isTransformable ? .transformable(bytes) : .binary(bytes)
                    extrasForWriting.loadedBlobs[index] = value
                    return value
                }
                // Another context replaced (or deleted) the value after this object read its row, and a compaction
                // dropped it from the log: read the store's current value instead, as a refetch would.
                guard let latest = context.parentStore.row(of: identity, entityIndex: entity.index) else {
                    // Deleted in the store: the object reads as its defaults, as a fault of it would.
                    guard case .attribute(let value) = entity.defaultValues[index] else { return .null }
                    return value
                }
                guard case .attribute(let value) = latest.values[index] else { return .null }
                guard case .blob(let next) = value else {
                    extrasForWriting.loadedBlobs[index] = value
                    return value
                }
                precondition(
                    next != reference,
                    "the live value of \(entity.name).\(entity.properties[index].name) is missing from the store")
                reference = next
            }
        } catch {
            preconditionFailure(
                "reading the external value of \(entity.name).\(entity.properties[index].name) failed: \(error)")
        }
    }

    /// Whether an externally stored value of the property is held in memory (for tests and tools).
    final func isExternalValueLoaded(at index: Int) -> Bool { extras?.loadedBlobs[index] != nil }

    /// The targets of a relationship, as objects of the object's context.
    @usableFromInline
    final func relationshipTargets(at index: Int) -> [ManagedObject] {
        guard let context = contextStorage else {
            stopIfContextReleased(index)
            return []
        }
        guard let value = currentValue(at: index) else { return [] }
        return context.objects(for: context.mountedReferences(value.references))
    }

    /// Sets the targets of a relationship, keeping the inverse consistent.
    @usableFromInline
    final func setRelationshipTargets(_ targets: [ManagedObject], at index: Int) {
        if contextStorage == nil {
            stopIfContextReleased(index, changing: true)
            guard let context = targets.first(where: { $0.contextStorage != nil })?.contextStorage else {
                if targets.isEmpty { return }
                preconditionFailure(
                    "insert \(type(of: self)) or one of its targets into a context before setting relationships")
            }
            context.insert(self)
        }
        contextStorage!.setRelationship(of: self, at: index, to: targets)
    }

    /// Forgets unsaved values and loaded external values; the next read fires from the store.
    final func turnIntoFault(keepingTransients: Bool) {
        if keepingTransients, let entityStorage {
            pending.removeAll { entityStorage.isPersistentProperty[$0.index] }
        } else {
            pending.removeAll()
        }
        if let extras {
            extras.loadedBlobs.removeAll()
            extras.fetchedPropertyCaches.removeAll()
        }
        committed = nil
        flags.insert(.isFault)
        flags.remove(.isListedAsChanged)
    }
}
