import LogFormat

/// Nested contexts: a child reads through its parent and saves into it.
extension ObjectContext {
    /// A new child of this context.
    ///
    /// The child sees this context's unsaved inserts, updates and deletes. Its ``save()`` validates its changes
    /// and pushes them into this context, as this context's unsaved changes — nothing reaches the log until a
    /// root context (one made by the container) saves. Dropping the child, or its ``rollback()``, leaves this
    /// context untouched. Objects the child inserts keep temporary IDs until the root saves; from then on they
    /// read as permanent in every context that holds them. Conflicts with changes this context (or a sibling
    /// that pushed first) made since the child read an object follow the child's ``mergePolicy``.
    ///
    /// The child lives in this context's isolation domain; pass ``ObjectID`` values, not objects, elsewhere.
    public func makeChildContext(name: String? = nil) -> ObjectContext {
        let child = ObjectContext(parentStore: ParentContextStore(parent: self), name: name ?? "\(self.name).child")
        childContexts.removeAll { $0.context == nil }
        childContexts.append(WeakContext(context: child))
        return child
    }

    /// The context this one saves into, or `nil` for a root context (one that saves to the store).
    public var parentContext: ObjectContext? {
        (parentStore as? ParentContextStore)?.parent
    }
}

/// A child context as its parent knows it: not kept alive by the parent, since dropping a child discards it.
struct WeakContext {
    weak var context: ObjectContext?
}

extension ObjectContext {
    /// Renames objects in every context beneath this one after a root save gave them other identities: an upsert
    /// (``fetchOrInsert(_:unique:equals:configure:)``) whose unique value another context had committed meanwhile
    /// becomes that object, and the children that created or read it must hold it by its new identity, or their
    /// objects would name an identity the store never had.
    ///
    /// Children live in this context's isolation domain (see ``makeChildContext(name:)``), so they are renamed
    /// here, at once. Every unchanged object of theirs is turned into a fault, since its row (read through this
    /// context) may refer to an old identity; it reads again on first use. Unsaved changes are kept, their
    /// references renamed.
    func renameInChildren(_ renamed: [ObjectIdentity: ObjectIdentity]) {
        guard !renamed.isEmpty else { return }
        childContexts.removeAll { $0.context == nil }
        for case let child? in childContexts.map(\.context) {
            child.rename(renamed)
            child.renameInChildren(renamed)
        }
    }

    private func rename(_ renamed: [ObjectIdentity: ObjectIdentity]) {
        for (old, new) in renamed {
            guard let object = registered.removeValue(forKey: old) else { continue }
            registered[new]?.flags.insert(.isFault)
            object.identity = new
            registered[new] = object
        }
        func map(_ reference: ObjectReference) -> ObjectReference {
            guard let new = renamed[reference.identity] else { return reference }
            return ObjectReference(new, entityIndex: Int(reference.entityIndex))
        }
        for object in registered.values {
            for position in object.pending.indices {
                switch object.pending[position].value {
                case .attribute: continue
                case .toOne(let reference): object.pending[position].value = .toOne(reference.map(map))
                case .toMany(let references): object.pending[position].value = .toMany(references.map(map))
                }
            }
            guard !object.flags.contains(.isInserted), !object.hasPersistentChanges else { continue }
            object.row = nil
            object.loadedBlobs.removeAll()
            object.flags.insert(.isFault)
        }
        changeTracking.deliverRenames(renamed)
    }
}
