import LogFormat

/// The base class of every persistent object.
///
/// Subclass it and declare properties with ``Attribute``, ``Transformable`` and ``Relationship``; reading and
/// writing them is plain Swift. An object belongs to at most one ``ObjectContext`` and must only be used in that
/// context's isolation domain (objects are not `Sendable`; pass ``objectID`` values between tasks instead).
///
/// Objects returned by fetches and relationship traversals are *faults*: they hold no values of their own until
/// a property is read, and then fire from the store's committed snapshot.
///
/// A subclass that declares its own designated initializer must also provide `required init() { super.init() }`,
/// which the store uses to create instances. Such an initializer must not read or write persistent properties.
open class ManagedObject: Hashable, CustomStringConvertible {
    struct Flags: OptionSet {
        var rawValue: UInt8
        /// Values have not been read yet.
        static let isFault = Flags(rawValue: 1 << 0)
        /// Inserted in the context and not yet saved.
        static let isInserted = Flags(rawValue: 1 << 1)
        /// Deleted in the context and not yet saved.
        static let isDeleted = Flags(rawValue: 1 << 2)
        /// Listed in the context's changed objects.
        static let isListedAsChanged = Flags(rawValue: 1 << 3)
        /// Deleted by a save (or found missing from the store); no longer usable.
        static let isDead = Flags(rawValue: 1 << 4)
        /// A probe instance that records which property a key path reads (see ``ManagedObject/propertyIndex(of:)``).
        static let isProbe = Flags(rawValue: 1 << 5)
        /// An inserted object whose insert operation a save in progress has built: a change of it (by another
        /// object's validation) is noted, so that the operation is built again (see `ObjectContext.save()`).
        static let isStagedForSave = Flags(rawValue: 1 << 6)
        /// A fault a lookup by ID made: its first property read tells the context which property that was, so that
        /// the next lookups start loading it (see ``ObjectContext/object(with:)``). Checked only where a read clears
        /// ``isFault``, so a fetched object's reads pay no more than a bit test once.
        static let isLookedUpByID = Flags(rawValue: 1 << 7)
    }

    /// A value set in the context and not yet saved: a property change as a save's insert lists it, so that the
    /// insert of a new object shares the object's array instead of building one (see
    /// `ObjectContext.appendInsert`).
    typealias PendingValue = PropertyChange

    /// What few objects use — loaded external values, fetched-property caches, probe records — in one record
    /// allocated on first use: a fetch creates and frees an object per row, and each of these fields, kept in the
    /// object itself, was a field to initialize and release for every one of them. (The detachment stays a field:
    /// a context released while its fetch results are still held detaches every one of them, and a record made
    /// for each would cost an allocation per object there.)
    final class Extras {
        /// Externally stored binary values read from the log, by property index; dropped on refresh.
        var loadedBlobs: [Int: AttributeValue] = [:]
        /// The last result of each fetched property, by name (see ``FetchedProperty``); dropped on refresh.
        var fetchedPropertyCaches: [String: FetchedPropertyCache] = [:]
        /// For probe instances: the index of the last property read.
        var probedIndex: Int?
        /// For probe instances: how many attribute reads the key path being probed made.
        var probedReads = 0
        /// For probe instances: the key path of the last ``Attribute`` written (the property's own key path, which
        /// its setter passes, not that of a computed property that writes it).
        var probedKeyPath: AnyKeyPath?
    }

    /// The object's entity; `nil` before it is inserted (and after a rollback of its insert).
    ///
    /// Not a strong reference: every fetched object retained the shared description when it was made and released it
    /// when it was freed, two atomic writes to one shared object per object (h77's profile of a fetch that reads
    /// every post). The rule that makes the unowned reference safe: the description belongs to a model
    /// (``ObjectModel/entities``) and is set only from one, and whatever the object depends on keeps that model
    /// alive — its context while it belongs to one (the context's store holds the model), its ``Detachment`` once it
    /// left it (every way out but a rollback detaches it: ``Detachment/model``), and a rollback of its insert clears
    /// this field (``ObjectContext/rollback()``). So no object reads the description after its model is freed.
    final unowned(unsafe) var entityStorage: EntityDescription?
    /// The context the object belongs to; `nil` before it is inserted and once it has left its context (see
    /// ``Detachment``).
    ///
    /// Not a `weak` reference: a weak reference gives every object a side table on first use — an allocation to
    /// make and to free per fetched object, and every retain and release of the object then goes through the table
    /// (together about a tenth of a fetch that reads every post, h71's profile). The context's lifetime rule makes
    /// the unowned reference safe instead: a context sets it only on objects it registers, and every path that takes
    /// an object out of its registry — the context's release (``ObjectContext``'s `deinit`), ``ObjectContext/reset()``,
    /// ``ObjectContext/rollback()``, a save or a merge that deletes the object, a registration that displaces it —
    /// clears it first (``ManagedObject/leaveContext(_:)``), so it never outlives the context.
    final var contextStorage: ObjectContext? {
        @inline(__always) get { contextReference?.takeUnretainedValue() }
        @inline(__always) set { contextReference = newValue.map { Unmanaged.passUnretained($0) } }
    }
    /// ``contextStorage`` as stored: an unowned reference, as `unowned(unsafe)` would be, that a property read can
    /// use without a retain and a release of the context (``Unmanaged/_withUnsafeGuaranteedRef(_:)``; a strong
    /// reference made from an `unowned(unsafe)` one cost both, see `ManagedObject.checkpointColumns(of:reading:)`).
    final private(set) var contextReference: Unmanaged<ObjectContext>?
    /// How the object left its context, once it did (see ``Detachment``).
    final var detachment: Detachment?
    /// Which object this is in its context: its store and key (the key alone repeats across stores). Set when the
    /// object is inserted or fetched into a context.
    final var identity = ObjectIdentity(storeIndex: 0, key: 0)
    /// The committed values the object reads: `nil` until a fault fires (or for a new object); a chunk slot for an
    /// object fetched or looked up, a ``Row`` once something needed one (see ``row``).
    final var committed: CommittedValues? {
        didSet { committedColumns = committed?.heldColumns }
    }
    /// The columns of ``committed``'s slot, read in place by property reads (see ``HeldSlotColumns``): set with it,
    /// `nil` unless it is a slot that holds its columns.
    final private(set) var committedColumns: HeldSlotColumns?
    final var flags: Flags = []
    /// What ``pending`` holds and what is held back for it (see ``PendingState``).
    ///
    /// Reading `pending.isEmpty` where a property read checks for unsaved values cost a run-time exclusivity check per
    /// read (`swift_beginAccess`, ≈ 4 % of a fetch that reads every post, h77's profile): the array has long accesses
    /// elsewhere (an edit in place that calls out), so the compiler keeps the checks on every access to it. This field
    /// has only short accesses, which need none, and it takes the padding after ``flags`` (no memory per object; the
    /// eight bits of ``Flags`` are all taken, and one more byte there would cost eight per object).
    final private(set) var pendingState: PendingState = []
    /// The bits of ``pendingState``.
    struct PendingState: OptionSet {
        var rawValue: UInt8
        /// ``pending`` holds a value, kept by its observer: what a property read checks first.
        static let hasValues = PendingState(rawValue: 1 << 0)
        /// A new object whose to-many inverses have appends that its context holds back (see
        /// `ObjectContext.deferInverseAppend`): the first access to ``pending`` applies them.
        static let hasDeferredInverseAppends = PendingState(rawValue: 1 << 1)
    }
    /// Whether ``pending`` holds a value: what a property read checks first.
    @inline(__always) final var hasPendingValues: Bool { pendingState.contains(.hasValues) }
    /// Whether the context holds back appends to this new object's to-many inverses (set and cleared by the context
    /// only: ``ObjectContext``'s `deferInverseAppend` and `applyDeferredInverseAppends`).
    final var hasDeferredInverseAppends: Bool {
        @inline(__always) get { pendingState.contains(.hasDeferredInverseAppends) }
        set {
            if newValue {
                pendingState.insert(.hasDeferredInverseAppends)
            } else {
                pendingState.remove(.hasDeferredInverseAppends)
            }
        }
    }
    /// The unsaved values. Every access first applies the inverse appends the context holds back for this object
    /// (``hasDeferredInverseAppends``), so that no code sees the list without them.
    final var pending: [PendingValue] {
        get {
            if hasDeferredInverseAppends { applyDeferredInverseAppends() }
            return storedPending
        }
        _modify {
            if hasDeferredInverseAppends { applyDeferredInverseAppends() }
            yield &storedPending
        }
        set {
            if hasDeferredInverseAppends { applyDeferredInverseAppends() }
            storedPending = newValue
        }
    }
    /// Applies the inverse appends the context holds back (for this object and every other), before ``pending`` is
    /// read or written.
    @inline(never)
    private final func applyDeferredInverseAppends() {
        guard let context = contextStorage else {
            // The context applies them before any object leaves it (`save`, `rollback`, `reset`, its release).
            preconditionFailure("\(self) holds inverse appends of a context it left")
        }
        context.applyDeferredInverseAppends()
    }
    /// The storage of ``pending``: read and written only through it.
    ///
    /// Release builds make no run-time exclusivity check on it. The array has long accesses (an edit in place that
    /// calls out, ``modifyPendingToMany(at:_:)``), so the compiler checks every access to it at run time: each setter,
    /// each read of a new object's value and each validation rule paid a `swift_beginAccess` and a
    /// `swift_endAccess` (with the context's registry and lists, 5.4 % of a bulk insert's main thread). The object is
    /// confined to its context's thread, so the checks guard only against the library's own reentrant accesses,
    /// which the test suite's debug builds still check (`DEBUG` keeps them on).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private final var storedPending: [PendingValue] = [] {
        didSet {
            if storedPending.isEmpty {
                pendingState.remove(.hasValues)
            } else {
                pendingState.insert(.hasValues)
            }
        }
    }
    /// The rarely used fields, `nil` until one is set.
    final var extras: Extras?

    /// The committed row the object reads, for the code that keeps, compares or rewrites rows (a save's read set,
    /// merges, conflicts, a child context's overlay): an object that holds a chunk slot gets its row made here,
    /// once, and holds that row from then on (so that `===` on it means what it did). Readers of values use
    /// ``committed``, which makes no row.
    final var row: Row? {
        get {
            guard case .slot = committed else {
                guard case .row(let row) = committed else { return nil }
                return row
            }
            let made = committed!.row(entityIndex: entity.index, key: identity.key)
            committed = .row(made)
            return made
        }
        set { committed = newValue.map(CommittedValues.row) }
    }

    /// Whether the object holds committed values (a fired fault, or a fault that was handed its slot).
    final var hasCommittedValues: Bool { committed != nil }

    /// The side record, made on first use.
    final var extrasForWriting: Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }

    /// Externally stored binary values read from the log, by property index; dropped on refresh.
    final var loadedBlobs: [Int: AttributeValue] {
        get { extras?.loadedBlobs ?? [:] }
        set { if !newValue.isEmpty || extras != nil { extrasForWriting.loadedBlobs = newValue } }
    }
    /// The last result of each fetched property, by name (see ``FetchedProperty``); dropped on refresh.
    final var fetchedPropertyCaches: [String: FetchedPropertyCache] {
        get { extras?.fetchedPropertyCaches ?? [:] }
        set { if !newValue.isEmpty || extras != nil { extrasForWriting.fetchedPropertyCaches = newValue } }
    }
    /// For probe instances: the index of the last property read.
    final var probedIndex: Int? {
        get { extras?.probedIndex }
        set { if newValue != nil || extras != nil { extrasForWriting.probedIndex = newValue } }
    }
    /// For probe instances: how many attribute reads the key path being probed made.
    final var probedReads: Int {
        get { extras?.probedReads ?? 0 }
        set { if newValue != 0 || extras != nil { extrasForWriting.probedReads = newValue } }
    }

    /// For probe instances: the key path that the last ``Attribute`` setter reached passed on (its own).
    final var probedKeyPath: AnyKeyPath? {
        get { extras?.probedKeyPath }
        set { if newValue != nil || extras != nil { extrasForWriting.probedKeyPath = newValue } }
    }

    /// Creates an object that belongs to no context yet; insert it with ``ObjectContext/insert(_:)``.
    public required init() {
        // Every wrapper of a subclass is initialized by now (a subclass initializes its stored properties before it
        // calls this): write each one its property's index.
        PropertyStamps.stamp(self)
    }

    /// The entity's name: the class name unless overridden.
    open class var entityName: String { String(describing: self) }

    /// The entity's name in the previous model version, when it was renamed: migration carries the old entity's
    /// objects over to this one (Core Data's renaming identifier, SwiftData's `originalName`).
    open class var originalEntityName: String? { nil }

    /// Compound uniqueness constraints: each a list of attribute names whose values together are unique.
    ///
    /// Single attributes are made unique with ``AttributeOption/unique``.
    open class var uniquenessConstraints: [[String]] { [] }

    /// Compound indexes: each a list of attribute names. Single attributes use ``AttributeOption/indexed``.
    open class var indexes: [[String]] { [] }

    /// A custom validation rule run at save for inserted and updated objects; throw to refuse the save.
    ///
    /// The error's description becomes the failure's message.
    open func validate() throws {}

    /// The context the object belongs to, if any.
    public final var context: ObjectContext? { contextStorage }

    /// The object's entity; a programmer error before the object is inserted.
    public final var entity: EntityDescription {
        guard let entityStorage else {
            preconditionFailure("\(type(of: self)) has no entity until it is inserted into a context")
        }
        return entityStorage
    }

    /// The object's ID: temporary until its first save, permanent after. It stays valid after the object leaves its
    /// context (the context is released or reset, or a save deletes the object).
    public final var objectID: ObjectID {
        guard let entityStorage,
            let storeUUIDs = contextStorage?.parentStore.storeUUIDs ?? detachment?.storeUUIDs
        else {
            preconditionFailure("\(type(of: self)) has no object ID until it is inserted into a context")
        }
        return ObjectID(
            storeUUID: storeUUIDs[Int(identity.storeIndex)], entityName: entityStorage.name, key: identity.key,
            isTemporary: flags.contains(.isInserted) || contextStorage?.parentStore.isUncommitted(identity) == true)
    }

    /// Whether no property has been read since the object was fetched, traversed to or refreshed.
    public final var isFault: Bool { flags.contains(.isFault) }
    /// Whether the object is inserted and not yet saved.
    public final var isInserted: Bool { flags.contains(.isInserted) }
    /// Whether the object is deleted and not yet saved (or was deleted by a save).
    public final var isDeleted: Bool { flags.contains(.isDeleted) || flags.contains(.isDead) }
    /// Whether the object has unsaved property changes (inserted and deleted objects aside).
    public final var isUpdated: Bool { !pending.isEmpty && !isInserted && !isDeleted }
    /// Whether the object is inserted, deleted or has unsaved changes.
    public final var hasChanges: Bool { isInserted || isDeleted || hasPersistentChanges }

    var hasPersistentChanges: Bool {
        guard let entityStorage else { return !pending.isEmpty }
        return pending.contains { entityStorage.isPersistentProperty[$0.index] }
    }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    open var description: String {
        guard contextStorage != nil, entityStorage != nil else {
            switch detachment?.reason {
            case .released?: return "<\(type(of: self)) \(objectID.uriString) (its context was released)>"
            case .reset?, .deleted?: return "<\(type(of: self)) \(objectID.uriString) (deleted or reset)>"
            case nil:
                let state = flags.contains(.isDead) ? "deleted or reset" : "not inserted"
                return "<\(type(of: self)) (\(state))>"
            }
        }
        return "<\(entity.name) \(objectID.uriString)\(isFault ? " fault" : "")>"
    }
}

extension ManagedObject {
    /// Issues a pass's prefetches at `position` of `objects` (see ``SavePrefetch``): the fields of the object
    /// ``SavePrefetch/firstLinkDistance`` ahead, the unsaved values of the one ``SavePrefetch/valuesDistance`` ahead
    /// and what those of the one ``SavePrefetch/storageDistance`` ahead point to (strings' bytes only when
    /// `strings`). The unsaved values are read as they are stored, without applying held-back inverse appends (a
    /// save applies them before its passes; a prefetch of an older array is harmless).
    ///
    /// Every address is taken before the first prefetch, by code that calls nothing, so that no object or array is
    /// retained for it (a retain would wait for the very cache line the prefetch is for).
    @inline(__always)
    static func prefetchAhead(in objects: UnsafeBufferPointer<ManagedObject>, from position: Int, strings: Bool) {
        let count = objects.count
        let first = position &+ SavePrefetch.firstLinkDistance
        let instance = first < count ? UnsafeRawPointer(Unmanaged.passUnretained(objects[first]).toOpaque()) : nil
        let values = position &+ SavePrefetch.valuesDistance
        let valuesStart = values < count ? SavePrefetch.elements(of: objects[values].storedPending).baseAddress : nil
        let storage = position &+ SavePrefetch.storageDistance
        let stored =
            storage < count
            ? SavePrefetch.elements(of: objects[storage].storedPending) : UnsafeBufferPointer(start: nil, count: 0)
        if let instance { SavePrefetch.prefetch(instance, lineCount: 2) }
        SavePrefetch.prefetchValues(at: valuesStart)
        SavePrefetch.prefetchStorage(of: stored, lists: true, strings: strings)
    }

    /// Issues `finishSave`'s prefetches at `position` of `objects`: the fields of the object
    /// ``SavePrefetch/valuesDistance`` ahead and the header of the unsaved values' array of the one
    /// ``SavePrefetch/storageDistance`` ahead (what letting go of it reads and writes).
    @inline(__always)
    static func prefetchForRelease(in objects: UnsafeBufferPointer<ManagedObject>, from position: Int) {
        let count = objects.count
        let first = position &+ SavePrefetch.valuesDistance
        let instance = first < count ? UnsafeRawPointer(Unmanaged.passUnretained(objects[first]).toOpaque()) : nil
        let storage = position &+ SavePrefetch.storageDistance
        let valuesStart = storage < count ? SavePrefetch.elements(of: objects[storage].storedPending).baseAddress : nil
        if let instance { SavePrefetch.prefetch(instance, lineCount: 2) }
        SavePrefetch.prefetchHeader(at: valuesStart)
    }
}

extension PropertyChange {
    /// The property's index, as an object's unsaved values (``ManagedObject/PendingValue``) are read.
    @inline(__always) var index: Int { Int(propertyIndex) }

    /// An unsaved value of property `index` (a property index of an entity, far below `UInt32.max`).
    @inline(__always) init(index: Int, value: PropertyValue) {
        self.init(propertyIndex: UInt32(index), value: value)
    }
}
