import LogFormat

/// A scratch pad of objects: insert, change and delete them, then ``save()`` — one changeset, all or nothing.
///
/// A context is not `Sendable`: it and its objects stay in the isolation domain that created them (the main
/// actor for ``ModelContainer/mainContext``, a task for ``ModelContainer/newBackgroundContext(name:)``). Pass
/// ``ObjectID`` values between contexts. Each object ID has at most one object in a context (uniquing).
///
/// Other contexts' saves become visible to this one on its next fetch (for objects without unsaved changes)
/// and on ``refresh(_:mergeChanges:)``.
public final class ObjectContext {
    /// What the context reads from and saves into: the store of its container, or its parent context for a child
    /// (``ParentContextStore``); a coordinator of several stores is to conform as well (see ``ObjectStore``).
    let parentStore: any ObjectStore
    /// The name recorded as the author of this context's changesets.
    public var name: String
    /// What a save does when objects it changes were changed in the store meanwhile.
    public var mergePolicy: MergePolicy = .error

    // The registry and the lists below are touched for every object a context inserts, changes or fetches. Each has
    // long accesses somewhere (a pass that calls out), so the compiler checks every access to it at run time; release
    // builds make no such check on them, debug builds (the test suite's) still do. See `ManagedObject.storedPending`.

    /// One object per identity (uniquing); the identity includes the store, since keys repeat across stores.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var registered = ObjectRegistry()
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var insertedList: [ManagedObject] = []
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var changedList: [ManagedObject] = []
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var deletedList: [ManagedObject] = []
    /// Appends to new objects' to-many inverses held back until something reads or writes those objects' unsaved
    /// values (see ``deferInverseAppend(_:to:at:)``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var deferredInverseAppends = DeferredInverseAppends()
    /// Objects that a save's validation changed after their insert operation was built (see `save()`).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var changedAfterStaging: [ManagedObject] = []
    /// Inserted objects created by ``fetchOrInsert(_:unique:equals:configure:)``: key → constraint ordinal.
    var upsertKeys: [ObjectIdentity: Int] = [:]
    /// What the last fetch did (rows examined, index used); for tests.
    var lastFetchStatistics = FetchStatistics()
    /// Validation patterns, compiled once per context: compiling costs tens of microseconds, and every save
    /// validates each updated object again. (`Regex` is not `Sendable`, so the shared model cannot hold them.)
    var compiledPatterns = CompiledPatterns()
    /// Change observers, what they were told last, and automatic merging (`Observation/ObjectContext+Changes`).
    let changeTracking = ContextChangeTracking()
    /// How many saves of child contexts have been pushed into this one (a fetched property's cached result made
    /// before one may be stale; see ``FetchedProperty``).
    var childSaveCount: UInt64 = 0
    /// The child contexts made from this one and still alive (`Context/ObjectContext+Children`).
    var childContexts: [WeakContext] = []
    /// The entity the last lookup by ID named (see ``object(with:)``).
    private var lastEntityByName: EntityDescription?
    /// The entity version the last lookup by ID read, kept for the next (see ``EntityVersionCache``). Unchecked:
    /// only this context's methods reach it, one at a time (a dynamic exclusivity check cost two runtime calls per
    /// lookup).
    @exclusivity(unchecked) var lookupCache = EntityVersionCache()
    /// The property that the first read of the last object looked up by ID and fired read, and its entity's index
    /// (`-1` for none): a lookup of that entity starts loading that property's value for the slot it finds (see
    /// ``object(with:)``). Unchecked, as ``lookupCache``.
    @exclusivity(unchecked) private(set) var lookupReadProperty = (entityIndex: -1, property: 0)
    /// The decoded columns of the checkpoint chunks the context's objects read last (see
    /// ``CheckpointColumnsCache``). Unchecked, as ``lookupCache``: every property read of such an object reaches it.
    @exclusivity(unchecked) var checkpointColumns = CheckpointColumnsCache()

    init(parentStore: any ObjectStore, name: String) {
        self.parentStore = parentStore
        self.name = name
    }

    deinit {
        applyDeferredInverseAppends()
        guard !registered.isEmpty || !registered.displaced.isEmpty else { return }
        // Objects still referenced elsewhere keep their IDs and stop with a message when used (see `Detachment`); they
        // no longer refer to the context (`ManagedObject.contextStorage` is unowned: it must not outlive it).
        let detachment = Detachment(
            storeUUIDs: parentStore.storeUUIDs, contextName: name, reason: .released, model: model)
        // An object only the registry holds goes away with it: it needs no detaching. One pass detaches the others
        // and releases every object, instead of a second pass when the table's storage is freed.
        registered.removeAll(callingForShared: { $0.detach(detachment) })
    }

    /// The model of the store.
    public var model: ObjectModel { parentStore.model }

    /// Whether the context's store is read-only (an *as of* view).
    public var isReadOnly: Bool { parentStore.isReadOnly }

    /// Whether the context holds unsaved inserts, deletes or changes.
    public var hasChanges: Bool {
        insertedList.contains { !$0.isDeleted }
            || deletedList.contains { !$0.isInserted && !$0.flags.contains(.isDead) }
            || changedList.contains { $0.isUpdated && $0.hasPersistentChanges }
    }

    /// Objects inserted and not yet saved.
    public var insertedObjects: [ManagedObject] {
        insertedList.filter { $0.flags.contains(.isInserted) && !$0.flags.contains(.isDeleted) }
    }

    /// Saved objects with unsaved changes.
    public var updatedObjects: [ManagedObject] {
        changedList.filter { $0.isUpdated && $0.hasPersistentChanges }
    }

    /// Saved objects deleted and not yet saved.
    public var deletedObjects: [ManagedObject] {
        deletedList.filter { !$0.flags.contains(.isInserted) && $0.flags.contains(.isDeleted) }
    }

    /// Every object the context holds.
    public var registeredObjects: some Collection<ManagedObject> { registered.values }

    // MARK: - Inserting

    /// Inserts a new object; it gets a temporary ID and a permanent one at the next save.
    public func insert(_ object: ManagedObject) {
        if object.contextStorage === self { return }
        precondition(object.contextStorage == nil, "\(object) already belongs to another context")
        precondition(
            object.detachment?.reason != .released,
            "\(object) belonged to a context that was released; look it up by its ID instead of inserting it again")
        precondition(!object.flags.contains(.isDead), "\(object) was deleted and cannot be inserted again")
        let entity = object.entityStorage ?? model.requireEntity(for: type(of: object))
        precondition(!entity.isAbstract, "\(entity.name) is abstract; insert an object of a sub-entity")
        object.entityStorage = entity
        object.contextStorage = self
        object.identity = parentStore.reserveIdentity(for: entity)
        object.flags = [.isInserted]
        if entity.hasInstanceDefaults {
            for (index, value) in ClassRegistry.info(for: type(of: object)).freshDynamicDefaults()
            where object.pendingValue(at: index) == nil {
                object.setPendingValue(.attribute(value), at: index)
            }
        }
        registered[object.identity] = object
        insertedList.append(object)
    }

    /// Inserts a new object of an entity by name (the dynamic API; the object's class is the entity's class).
    @discardableResult
    public func insert(entityNamed name: String) -> ManagedObject {
        guard let entity = model.entity(named: name) else {
            preconditionFailure("the model '\(model.name)' has no entity named '\(name)'")
        }
        let object = entity.objectClass.init()
        object.entityStorage = entity
        insert(object)
        return object
    }

    // MARK: - Looking up

    /// The object with an ID: the registered one, or a fault for a saved object; `nil` when the store has none.
    ///
    /// An ID resolves only in the store whose UUID it carries: every store numbers its objects from the same
    /// start, so another store's ID with the same key names a different object.
    ///
    /// Like a property getter of a fault (Core Data's "could not fulfill a fault"), this cannot throw: a chunk of the
    /// store's checkpoint that may hold the object and cannot be loaded (damaged, or its reads kept failing) ends the
    /// process with a message naming the file, the entity, the chunk, its byte offset and the key — it never
    /// answers `nil` for an object that exists. A fetch (``fetch(_:)``) throws that error instead.
    public func object(with id: ObjectID) -> ManagedObject? {
        guard let storeIndex = parentStore.storeIndex(of: id.storeUUID), let entity = entity(named: id.entityName)
        else { return nil }
        let identity = ObjectIdentity(storeIndex: storeIndex, key: id.key)
        // An entity without sub-entities (the usual ID): the store's place for the key is loaded while the registry
        // is probed, two cache misses at once.
        let isOneEntity = entity.familyIndices.count == 1
        // The property the caller is likely to read next: the one the last looked-up object's first read was.
        let expectedProperty = entity.index == lookupReadProperty.entityIndex ? lookupReadProperty.property : -1
        if isOneEntity {
            parentStore.prefetchCommittedRow(
                of: identity, entityIndex: entity.index, cache: &lookupCache, prefetchingProperty: expectedProperty)
        }
        let registeredObject = registered[identity]
        // The expected property's bytes at the slot the object is likely at (whose offsets were asked for above)
        // start loading now: with the found object's fields, or while the store's lookup and the fault are made.
        if isOneEntity { lookupCache.prefetchPredictedBytes(forKey: identity.key, property: expectedProperty) }
        if let object = registeredObject {
            let objectEntity = object.entity
            guard objectEntity === entity || objectEntity.isKindOf(entity), !object.flags.contains(.isDead) else {
                return nil
            }
            // An object looked up again: its slot's entries may have left the cache since its last read.
            if objectEntity.index == lookupReadProperty.entityIndex, let columns = object.committedColumns {
                columns.prefetchValue(at: lookupReadProperty.property)
            }
            return object
        }
        // The expected property starts loading with the slot's version (a store does so), or at the latest while the
        // fault is made: its read then finds the slot's entries in the cache instead of waiting for them after this
        // returns.
        let found =
            isOneEntity
            ? parentStore.committedRow(
                of: identity, entityIndex: entity.index, cache: &lookupCache, prefetchingProperty: expectedProperty)
            : parentStore.committedRow(of: identity, in: entity.familyIndices)
        guard let row = found else { return nil }
        if row.entityIndex == lookupReadProperty.entityIndex, let columns = row.values.heldColumns {
            if !isOneEntity { columns.prefetchValue(at: lookupReadProperty.property) }
            // A string's bytes start loading before the fault is made, not when it is read.
            columns.prefetchBytes(at: lookupReadProperty.property)
        }
        // Not registered (looked up above): a new fault holding its slot, without a second lookup; of the entity
        // named, unless the row is a sub-entity's (no trip through the store's model for the usual case).
        let rowEntity = row.entityIndex == entity.index ? entity : model.entities[row.entityIndex]
        let object = makeFault(holding: row, identity: identity, entity: rowEntity)
        object.flags.insert(.isLookedUpByID)
        return object
    }

    /// Notes the property that the first read of an object looked up by ID read (see ``lookupReadProperty``).
    func noteFirstRead(ofProperty property: Int, entityIndex: Int) {
        lookupReadProperty = (entityIndex, property)
    }

    /// The model's entity with a name; the last one found is kept, since lookups by ID usually name one entity
    /// after another (comparing a short name is cheaper than hashing it).
    private func entity(named name: String) -> EntityDescription? {
        if let last = lastEntityByName, last.name == name { return last }
        let found = model.entity(named: name)
        lastEntityByName = found
        return found
    }

    /// The object for a reference: the registered one or a new fault.
    func object(for reference: ObjectReference) -> ManagedObject {
        let identity = reference.identity
        if let object = registered[identity] { return object }
        let object = newObject(of: model.entities[Int(reference.entityIndex)], identity: identity, flags: [.isFault])
        registered[identity] = object
        return object
    }

    /// A new object of `entity` with `identity`, belonging to this context (not registered yet).
    @inline(__always)
    func newObject(of entity: EntityDescription, identity: ObjectIdentity, flags: ManagedObject.Flags)
        -> ManagedObject
    {
        let object = entity.objectClass.init()
        object.entityStorage = entity
        object.contextStorage = self
        object.identity = identity
        object.flags = flags
        return object
    }

    func objects(for references: [ObjectReference]) -> [ManagedObject] {
        references.map(object(for:))
    }

    /// The registered object for a committed row of the store at `storeIndex`, or a new fault holding the row.
    @inline(__always)
    func materialize(_ row: CommittedRow, inStore storeIndex: UInt32) -> ManagedObject {
        let identity = row.identity(inStore: storeIndex)
        if let object = registered[identity] { return update(object, with: row.values) }
        return makeFault(holding: row, identity: identity)
    }

    /// A registered object brought up to date with committed values, unless it has unsaved changes.
    @inline(__always)
    func update(_ object: ManagedObject, with values: CommittedValues) -> ManagedObject {
        if !object.hasPendingValues, !object.flags.contains(.isInserted),
            !(object.committed?.isSame(as: values) ?? false)
        {
            object.committed = values
            if object.extras != nil { object.loadedBlobs.removeAll() }
        }
        return object
    }

    /// A new registered fault holding a committed row (an unregistered identity): a chunk slot holds no ``Row``.
    @inline(__always)
    func makeFault(holding row: CommittedRow, identity: ObjectIdentity) -> ManagedObject {
        makeFault(holding: row, identity: identity, entity: model.entities[row.entityIndex])
    }

    /// ``makeFault(holding:identity:)`` when the caller has the row's entity at hand.
    @inline(__always)
    func makeFault(holding row: CommittedRow, identity: ObjectIdentity, entity: EntityDescription) -> ManagedObject {
        let object = newObject(of: entity, identity: identity, flags: [.isFault])
        object.committed = row.values
        registered.insertNew(copy object, forKey: identity)
        return object
    }

    func reference(to object: ManagedObject) -> ObjectReference {
        ObjectReference(object.identity, entityIndex: object.entity.index)
    }

    /// The IDs of some referenced objects, temporary for those inserted and not saved yet.
    func objectIDs(of references: [ObjectReference]) -> [ObjectID] {
        let storeUUIDs = parentStore.storeUUIDs
        return references.map { reference in
            ObjectID(
                storeUUID: storeUUIDs[Int(reference.storeIndex)],
                entityName: model.entities[Int(reference.entityIndex)].name, key: reference.key,
                isTemporary: registered[reference.identity]?.isInserted == true
                    || parentStore.isUncommitted(reference.identity))
        }
    }

    /// Called by an object the first time it changes after a save.
    func objectDidChange(_ object: ManagedObject) {
        changedList.append(object)
    }
}
