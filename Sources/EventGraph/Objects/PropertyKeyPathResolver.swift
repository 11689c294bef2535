import LogFormat
@_spi(ObservableRerootKeyPath) import Swift

/// Resolves a key path to a persistent property (`\Post.title` → the index of `title`) by reading it on a probe
/// instance that records which property its accessor asked for. Results are cached by key path.
enum PropertyKeyPathResolver {
    private static let cache = LockedValue<[ObjectIdentifier: Int]>([:])

    /// The property index that `keyPath` reads, or `nil` when it reads no persistent attribute directly.
    static func attributeIndex<Root: ManagedObject, Value>(of keyPath: KeyPath<Root, Value>) -> Int? {
        let id = ObjectIdentifier(keyPath)
        if let index = cache.withLock({ $0[id] }) { return index }
        let probe = Root()
        probe.flags = [.isFault, .isProbe]
        _ = probe[keyPath: keyPath]
        guard let index = probe.probedIndex else { return nil }
        cache.withLock { cache in
            if cache.updateValue(index, forKey: id) == nil { _ = Unmanaged.passRetained(keyPath) }
        }
        return index
    }

    private static let directCache = LockedValue<[ObjectIdentifier: Int]>([:])

    /// The index of the ``Attribute`` that `keyPath` *is* (`\Post.title`, or `\Student.name` for an attribute that
    /// `Student` inherits from `Person`; not a computed property that reads `title`), or `nil`.
    ///
    /// A key path is the attribute's own when writing through it reaches the attribute's setter with that key path:
    /// the setter passes the property's own key path (the declaring class's, which is rerooted to compare), and a
    /// computed property's setter passes another (see ``probe(_:)``). A key path that cannot write (a `let`, or
    /// `private(set)` outside its file) is never taken for the attribute, as the getter's key path never equalled
    /// one either.
    static func directAttributeIndex(of keyPath: AnyKeyPath) -> Int? {
        let id = ObjectIdentifier(keyPath)
        if let index = directCache.withLock({ $0[id] }) { return index >= 0 ? index : nil }
        var found = -1
        if let rootType = type(of: keyPath).rootType as? ManagedObject.Type, let probed = probe(keyPath),
            let index = probed.index, let written = probed.writtenKeyPath,
            written == keyPath || rerooted(written, to: rootType) == keyPath
        {
            found = index
        }
        directCache.withLock { cache in
            if cache.updateValue(found, forKey: id) == nil { _ = Unmanaged.passRetained(keyPath) }
        }
        return found >= 0 ? found : nil
    }

    /// What a key path of a ``ManagedObject`` class touches on a probe instance: the index of the last attribute it
    /// reads, and the key path that the setter it reaches passes on when the key path can write and reads exactly
    /// one attribute.
    ///
    /// The write stores the value just read through the same key path. A probe's ``Attribute`` setters record and
    /// store nothing, but a computed property's setter runs its own code as well, so it runs only for a key path that
    /// reads one attribute, as the attribute's own does (not for one that reads none or several, or reads through a
    /// relationship, which a probe answers as empty).
    static func probe(_ keyPath: AnyKeyPath) -> (index: Int?, writtenKeyPath: AnyKeyPath?)? {
        guard let rootType = type(of: keyPath).rootType as? ManagedObject.Type else { return nil }
        let probe = rootType.init()
        probe.flags = [.isFault, .isProbe]
        _ = probe[keyPath: keyPath]
        let index = probe.probedIndex
        if probe.probedReads == 1 { (keyPath as? any ProbeWritable)?.writeBack(on: probe) }
        return (index, probe.probedKeyPath)
    }

    /// A key path of a superclass (the declaring class of an inherited attribute) as a key path of `root`, which
    /// equals `\Root.property`; `nil` when `root` does not inherit from it.
    private static func rerooted(_ keyPath: AnyKeyPath, to root: ManagedObject.Type) -> AnyKeyPath? {
        guard let declaring = type(of: keyPath).rootType as? AnyClass, isSubclass(root, of: declaring) else {
            return nil
        }
        return root.rerootedKeyPath(keyPath)
    }

    private static func isSubclass(_ type: AnyClass, of declaring: AnyClass) -> Bool {
        var current: AnyClass? = type
        while let candidate = current {
            if candidate == declaring { return true }
            current = _getSuperclass(candidate)
        }
        return false
    }
}

/// A key path that can write through a probe (see ``PropertyKeyPathResolver/probe(_:)``).
private protocol ProbeWritable {
    func writeBack(on probe: ManagedObject)
}

extension ReferenceWritableKeyPath: ProbeWritable {
    fileprivate func writeBack(on probe: ManagedObject) {
        guard let root = probe as? Root else { return }
        root[keyPath: self] = root[keyPath: self]
    }
}

extension ManagedObject {
    /// A key path of a superclass as one of this class (`Self`, the class this is called on, not `ManagedObject`).
    fileprivate static func rerootedKeyPath(_ keyPath: AnyKeyPath) -> AnyKeyPath {
        _rerootKeyPath(keyPath, to: Self.self)
    }
}
