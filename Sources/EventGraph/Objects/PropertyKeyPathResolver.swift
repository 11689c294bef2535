import LogFormat

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

    /// The index of the ``Attribute`` that `keyPath` *is* (`\Post.title`, not a computed property that reads
    /// `title`), or `nil`.
    static func directAttributeIndex(of keyPath: AnyKeyPath) -> Int? {
        let id = ObjectIdentifier(keyPath)
        if let index = directCache.withLock({ $0[id] }) { return index >= 0 ? index : nil }
        guard let rootType = type(of: keyPath).rootType as? ManagedObject.Type else { return nil }
        let probe = rootType.init()
        probe.flags = [.isFault, .isProbe]
        _ = probe[keyPath: keyPath]
        var found = -1
        if let index = probe.probedIndex, let read = probe.probedKeyPath, read == keyPath { found = index }
        directCache.withLock { cache in
            if cache.updateValue(found, forKey: id) == nil { _ = Unmanaged.passRetained(keyPath) }
        }
        return found >= 0 ? found : nil
    }
}
