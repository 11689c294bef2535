import LogFormat
import Synchronization

/// Maps the storage key path that a property wrapper's accessor receives to the property's index: for
/// ``Transformable``, whose wrapper holds its transformer. ``Attribute`` and ``Relationship`` find the index in their
/// wrapper instead (see ``PropertyStamps``), which spares their accessors the key paths.
///
/// The runtime caches the key path objects that synthesized accessors pass, so the object's address is a stable
/// key. Reads are lock-free (an open-addressing table of atomics, written only under a mutex) because they run
/// on every property access; a miss resolves the name from the key path's description once. Key paths are
/// retained forever once cached, so an address can never be reused by a different key path.
///
/// A cached key path is also made immortal (see ``immortalize(_:)``), and so is the accessor's other key path (the
/// wrapped property's): the synthesized accessor fetches both from the runtime on every read, a retain and a
/// release of each, and retains and releases of an immortal object write nothing.
@usableFromInline
enum PropertySlotCache {
    /// The index in the declaring class's property list (which is also the index in every sub-entity).
    ///
    /// `wrappedKeyPath` is the accessor's key path to the property itself, made immortal with `keyPath` when this
    /// caches it.
    @usableFromInline @inline(__always)
    static func index<Object: ManagedObject>(
        of keyPath: AnyKeyPath, wrapped wrappedKeyPath: AnyKeyPath? = nil, declaredIn type: Object.Type
    ) -> Int {
        let id = UInt(bitPattern: ObjectIdentifier(keyPath))
        if let index = table.lookup(id) { return index }
        return resolve(keyPath, wrapped: wrappedKeyPath, id: id, declaredIn: type)
    }

    private static let table = SlotTable(capacity: 1 << 13)
    private static let writer = LockedValue<Void>(())

    @inline(never)
    private static func resolve(
        _ keyPath: AnyKeyPath, wrapped wrappedKeyPath: AnyKeyPath?, id: UInt, declaredIn type: ManagedObject.Type
    ) -> Int {
        let info = ClassRegistry.info(for: type)
        let name = propertyName(of: keyPath)
        guard let index = info.indexByName[name] else {
            preconditionFailure("\(type) has no persistent property named '\(name)' (key path \(keyPath))")
        }
        writer.withLock { _ in
            // The retain is never balanced: a cached key path must outlive the table entry naming its address.
            // Both key paths are kept forever from here, so making them immortal changes nothing else; a key path
            // the runtime makes anew for each access (through a generic class) is kept and made immortal only
            // while the table has room, as before.
            guard table.lookup(id) == nil, table.insert(id, index) else { return }
            immortalize(Unmanaged.passRetained(keyPath))
            if let wrappedKeyPath { immortalize(Unmanaged.passRetained(wrappedKeyPath)) }
        }
        return index
    }

    /// Makes an object that is never released immortal: retains and releases of it then read its reference count
    /// without writing it (an atomic write each otherwise, 10 % of a fetch that reads every attribute).
    ///
    /// The runtime's entry point (`_swift_stdlib_immortalize`, which the Swift project's own benchmarks call the
    /// same way); only for an object that must live as long as the process, as the cached key paths do.
    private static func immortalize(_ object: Unmanaged<AnyKeyPath>) {
        swiftStdlibImmortalize(object.toOpaque())
    }

    /// Whether a key path is cached (and so made immortal), for tests.
    static func isCached(_ keyPath: AnyKeyPath) -> Bool {
        table.lookup(UInt(bitPattern: ObjectIdentifier(keyPath))) != nil
    }

    /// The property name from a storage key path's description (`\Post._title` → `title`).
    static func propertyName(of keyPath: AnyKeyPath) -> String {
        let text = String(describing: keyPath)
        let last = text.split(separator: ".").last.map(String.init) ?? text
        return last.hasPrefix("_") ? String(last.dropFirst()) : last
    }
}

@_silgen_name("_swift_stdlib_immortalize")
private func swiftStdlibImmortalize(_ object: UnsafeMutableRawPointer)

/// A fixed-capacity open-addressing table of (address → integer), lock-free for readers: key paths to property
/// indices here, classes to their stamp plans in `PropertyStamps`.
///
/// Entries are never removed. A writer (serialized by the caller) stores the value before publishing the key
/// with release ordering; a reader that sees the key with acquire ordering therefore sees the value.
final class SlotTable: Sendable {
    // The pointers are allocated once, never freed, and only accessed through atomics.
    nonisolated(unsafe) private let keys: UnsafeMutablePointer<Atomic<UInt>>
    nonisolated(unsafe) private let values: UnsafeMutablePointer<Atomic<Int>>
    private let mask: Int
    private let count = Atomic<Int>(0)

    init(capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
        keys = .allocate(capacity: capacity)
        values = .allocate(capacity: capacity)
        for slot in 0..<capacity {
            (keys + slot).initialize(to: Atomic(0))
            (values + slot).initialize(to: Atomic(0))
        }
        mask = capacity - 1
    }

    @inline(__always)
    private func slot(for id: UInt) -> Int {
        Int(truncatingIfNeeded: (id >> 4) &* 0x9E37_79B9_7F4A_7C15) & mask
    }

    @inline(__always)
    func lookup(_ id: UInt) -> Int? {
        var slot = slot(for: id)
        while true {
            let key = keys[slot].load(ordering: .acquiring)
            if key == id { return values[slot].load(ordering: .relaxed) }
            if key == 0 { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// Inserts; returns false when the table is three-quarters full (callers then stay on the slow path).
    func insert(_ id: UInt, _ value: Int) -> Bool {
        guard count.load(ordering: .relaxed) < (mask + 1) / 4 * 3 else { return false }
        var slot = slot(for: id)
        while keys[slot].load(ordering: .relaxed) != 0 { slot = (slot + 1) & mask }
        values[slot].store(value, ordering: .relaxed)
        keys[slot].store(id, ordering: .releasing)
        count.add(1, ordering: .relaxed)
        return true
    }
}
