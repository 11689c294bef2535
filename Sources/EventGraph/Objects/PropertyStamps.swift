import LogFormat
@_spi(Reflection) import Swift

/// Writes each ``Attribute`` and ``Relationship`` wrapper of a new object its property's index, so that an accessor
/// finds the index in the wrapper it already holds.
///
/// The synthesized accessor of a wrapped property passes two key paths to the wrapper's subscript. Looking the
/// property up by a key path's address (`PropertySlotCache`) made the accessor fetch both key paths from the runtime
/// on every read, a retain and a release each, and probe a table: 13 % of a fetch that reads every attribute of 100,000
/// posts. A getter that reads only the wrapper (`object[keyPath: storageKeyPath]`, which the compiler turns into a
/// load of the stored property when it inlines the accessor) makes no key path at all. (A setter still makes the
/// property's own key path and passes it on, for probes: see `PropertyKeyPathResolver`. Because that key path
/// escapes, the compiler checks exclusive access to the wrapper at run time, one `swift_beginAccess` per access,
/// which costs less than the key paths did.)
///
/// A wrapper's initializer cannot know its property: it runs before the object knows its class, and in the order
/// the class's initializer assigns the properties. So ``ManagedObject``'s initializer, which runs after every
/// wrapper of the object is initialized, writes them: at each wrapper's offset in the instance (from the runtime's
/// field records, the ones `Mirror` reads), ``stampBit`` with the property's index. The offsets are the class's, the
/// same in every instance, learned once per class (``ClassInfo/stampPlan``) and kept in a lock-free table by class.
///
/// Prototypes (``PrototypeCapture``) are never stamped: their tags number their declarations for ``ClassInfo``.
/// Reading or writing a property of one (in its initializer, which ``ManagedObject``'s documentation rules out) stops.
@usableFromInline
enum PropertyStamps {
    /// The bit of a stamped tag; a prototype's tags (declaration numbers) and an unstamped wrapper's 0 lack it.
    @usableFromInline static let stampBit: UInt16 = 0x8000

    /// The most properties a class can have: an index must fit under ``stampBit``.
    static let maximumPropertyCount = Int(stampBit)

    /// The property index in a wrapper's tag; stops when the wrapper was never stamped (read during the
    /// initializer of a prototype, which the documentation of ``ManagedObject`` rules out).
    @inlinable @inline(__always)
    static func index(in tag: UInt16, of object: ManagedObject) -> Int {
        if tag & stampBit != 0 { return Int(tag & ~stampBit) }
        unstamped(object)
    }

    @usableFromInline @inline(never)
    static func unstamped(_ object: ManagedObject) -> Never {
        preconditionFailure(
            "a persistent property of \(type(of: object)) was read or written before its initializer finished, "
                + "while its model was being built: an initializer must not read or write persistent properties")
    }

    /// Where one wrapper's tag is in an instance, and what it holds once stamped.
    struct Entry {
        var offset: Int
        var stamp: UInt16
    }

    /// The entries of one class, allocated once and never freed (the table holds their address).
    final class Plan: Sendable {
        nonisolated(unsafe) let entries: UnsafeMutableBufferPointer<Entry>

        init(_ entries: [Entry]) {
            self.entries = .allocate(capacity: entries.count)
            _ = self.entries.initialize(from: entries)
        }
    }

    /// `_EachFieldOptions.classType` (bit 0), which the standard library declares as a `static var` that strict
    /// concurrency checking will not let code read.
    private static let classFields = _EachFieldOptions(rawValue: 1 << 0)

    /// Plans by class (`ObjectIdentifier` of the metatype), each retained forever.
    private static let plans = SlotTable(capacity: 1 << 12)
    private static let writer = LockedValue<Void>(())

    /// Stamps a new object's wrappers; for ``ManagedObject``'s initializer.
    static func stamp(_ object: ManagedObject) {
        // A prototype keeps its declaration numbers for `ClassInfo`. Another thread's objects made meanwhile find no
        // session of their own, and another class's objects that the prototype's initializer makes are no prototypes:
        // both are stamped.
        let objectClass = type(of: object)
        if PrototypeCapture.isActive, let session = PrototypeCapture.current, session.prototypeClass == objectClass {
            return
        }
        let id = UInt(bitPattern: ObjectIdentifier(objectClass))
        let entries: UnsafeMutableBufferPointer<Entry>
        if let address = plans.lookup(id) {
            // The table holds the plan forever: read it without a retain and a release (an atomic write each, half
            // of the stamping's time in a profile).
            entries = Unmanaged<Plan>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)._withUnsafeGuaranteedRef {
                $0.entries
            }
        } else {
            entries = register(objectClass, id: id).entries
        }
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for entry in entries {
            base.storeBytes(of: entry.stamp, toByteOffset: entry.offset, as: UInt16.self)
        }
    }

    @inline(never)
    private static func register(_ objectClass: ManagedObject.Type, id: UInt) -> Plan {
        let plan = ClassRegistry.info(for: objectClass).stampPlan
        writer.withLock { _ in
            // Retained forever: the table names the plan by address. A full table leaves the class to
            // `ClassRegistry` (a lock and a dictionary per object made), which is correct but slower.
            guard plans.lookup(id) == nil else { return }
            let address = Int(bitPattern: Unmanaged.passRetained(plan).toOpaque())
            if !plans.insert(id, address) { Unmanaged.passUnretained(plan).release() }
        }
        return plan
    }

    /// The plan of a class whose properties (root class first) are `seeds`: the runtime's field records give each
    /// wrapper's offset by its stored name (`_title`); `tagOffset` is where the wrapper keeps its tag.
    static func plan(of objectClass: ManagedObject.Type, indexByName: [String: Int], seedCount: Int) -> Plan {
        precondition(
            seedCount <= maximumPropertyCount,
            "\(objectClass) declares \(seedCount) properties; at most \(maximumPropertyCount) are supported")
        var entries: [Entry] = []
        var wrappers = 0
        let walked = _forEachField(of: objectClass, options: classFields) { name, offset, fieldType, _ in
            guard let wrapper = fieldType as? any PropertyIntrospection.Type else { return true }
            wrappers += 1
            let label = String(cString: name)
            let propertyName = label.hasPrefix("_") ? String(label.dropFirst()) : label
            guard let index = indexByName[propertyName], let tagOffset = wrapper.tagOffset else { return true }
            entries.append(Entry(offset: offset + tagOffset, stamp: stampBit | UInt16(index)))
            return true
        }
        precondition(
            walked && wrappers == seedCount,
            "the runtime's field records of \(objectClass) list \(wrappers) property wrappers where Mirror found "
                + "\(seedCount)")
        return Plan(entries)
    }
}
