import Synchronization

/// Resolves a key path to a persistent property (`\Post.title` → the index of `title`) by reading it on a probe
/// instance that records which property its accessor asked for. Results are cached by key path.
enum PropertyKeyPathResolver {
    private static let cache = Mutex<[ObjectIdentifier: Int]>([:])

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
}
