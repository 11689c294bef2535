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
        ObjectContext(parentStore: ParentContextStore(parent: self), name: name ?? "\(self.name).child")
    }

    /// The context this one saves into, or `nil` for a root context (one that saves to the store).
    public var parentContext: ObjectContext? {
        (parentStore as? ParentContextStore)?.parent
    }
}
