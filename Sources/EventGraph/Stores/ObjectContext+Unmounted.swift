import LogFormat

// References into unmounted stores, as a context's objects see them. A relationship property reads only the
// targets that resolve (a to-one whose target is unmounted reads `nil`); the references themselves stay in the
// object's row and in its pending value, so a save never drops them. `unresolvedReferences(of:)` and
// `relatedObjects(of:relationship:)` say what is missing and where.
extension ObjectContext {
    /// The references of an object's relationships whose targets are in stores the container has not mounted.
    ///
    /// Each names the relationship, the target's permanent ID and the store (its UUID, and its configuration and
    /// path when the container knows them). The list is empty when every target resolves.
    public func unresolvedReferences(of object: ManagedObject) -> [UnresolvedReference] {
        precondition(object.contextStorage === self, "\(object) does not belong to this context")
        var unresolved: [UnresolvedReference] = []
        for case let relationship? in object.entity.properties.map(\.relationship) {
            let references = object.currentValue(at: relationship.index)?.references ?? []
            for reference in references {
                guard let store = unmountedStore(of: reference) else { continue }
                unresolved.append(
                    UnresolvedReference(
                        relationshipName: relationship.name, target: objectIDs(of: [reference])[0], store: store))
            }
        }
        return unresolved
    }

    /// The objects a relationship of `object` holds, all of them.
    ///
    /// - Throws: ``EventGraphError/Code/storeNotMounted`` when a target is in a store the container has not mounted,
    ///   naming the object, the relationship and the store; the relationship property itself reads only the targets
    ///   that resolve.
    public func relatedObjects(of object: ManagedObject, relationship name: String) throws(EventGraphError)
        -> [ManagedObject]
    {
        precondition(object.contextStorage === self, "\(object) does not belong to this context")
        guard let relationship = object.entity.properties.first(where: { $0.name == name })?.relationship else {
            preconditionFailure("\(object.entity.name) has no relationship named '\(name)'")
        }
        let references = object.currentValue(at: relationship.index)?.references ?? []
        if let missing = references.first(where: { unmountedStore(of: $0) != nil }),
            let store = unmountedStore(of: missing)
        {
            let count = references.count { unmountedStore(of: $0) != nil }
            throw EventGraphError(
                .storeNotMounted,
                "\(object.entity.name) \(object.objectID.uriString).\(name) refers to \(count) object(s) in \(store), "
                    + "such as \(objectIDs(of: [missing])[0].uriString); mount that store to read them")
        }
        return objects(for: references)
    }

    /// The references that resolve: those into mounted stores.
    func mountedReferences(_ references: [ObjectReference]) -> [ObjectReference] {
        // Relationship reads come here: a container whose stores are all mounted pays one call, no filtering.
        guard parentStore.hasUnmountedStores else { return references }
        return references.filter { parentStore.unmountedStore(at: $0.storeIndex) == nil }
    }

    /// The unmounted store a reference points into, with the configuration of its entity when the store's own is
    /// unknown; `nil` for a reference into a mounted store.
    func unmountedStore(of reference: ObjectReference) -> UnmountedStore? {
        guard parentStore.hasUnmountedStores, let store = parentStore.unmountedStore(at: reference.storeIndex)
        else { return nil }
        guard store.configuration == nil else { return store }
        let entity = model.entities[Int(reference.entityIndex)]
        return UnmountedStore(
            storeUUID: store.storeUUID, configuration: model.configurationName(of: entity), path: store.path)
    }
}

// Changes that would reach an unmounted store: an inverse to keep, a cascade, a stale object. They are noted on
// the object and refused at save, with the store named, rather than written to no log.
extension ObjectContext {
    func isInUnmountedStore(_ object: ManagedObject) -> Bool {
        // Asked for every target a relationship setter attaches: a container whose stores are all mounted answers
        // before the object's reference is made.
        parentStore.hasUnmountedStores && unmountedStore(of: reference(to: object)) != nil
    }

    /// Notes that inverse maintenance would change `target`'s relationship at `index` when `target` is in an
    /// unmounted store (whose row cannot be read), so that the save refuses; returns whether it did.
    func noteUnmounted(_ target: ManagedObject, at index: Int) -> Bool {
        guard isInUnmountedStore(target) else { return false }
        if target.flags.contains(.isFault) { target.flags.remove(.isFault) }
        target.setPendingValue(target.pendingValue(at: index) ?? target.entity.defaultValues[index], at: index)
        return true
    }

    /// Refuses a save that changes or deletes objects of unmounted stores.
    func refuseChangesInUnmountedStores(_ objects: [ManagedObject]) throws(EventGraphError) {
        guard parentStore.hasUnmountedStores else { return }
        let refused = objects.filter(isInUnmountedStore)
        guard let first = refused.first, let store = unmountedStore(of: reference(to: first)) else { return }
        let failures = refused.map { object in
            EventGraphError.Failure(
                entityName: object.entity.name, objectID: object.objectID, propertyName: nil,
                message: "is in \(unmountedStore(of: reference(to: object))!), which is not mounted")
        }
        throw EventGraphError(
            .storeNotMounted,
            "the save would \(first.isDeleted ? "delete" : "change") \(first.entity.name) \(first.objectID.uriString) "
                + "in \(store) (a cascade or the inverse of a relationship), which its log cannot record until the "
                + "store is mounted; nothing was saved",
            failures: failures)
    }
}
