import LogFormat

/// A fetched property's last result: the objects, as references, and the stores' last transactions and the context's
/// child saves when it was fetched (a later commit in any store beneath, or a child's save, makes it stale).
struct FetchedPropertyCache {
    var transactionStamp: [UInt64]
    var references: [ObjectReference]
}

extension ManagedObject {
    /// The objects of a fetched property, by name (the dynamic form of reading a ``FetchedProperty``).
    ///
    /// The fetch runs on the first read and again after the object is refreshed, a save commits in a store beneath
    /// the context, or a child context's save is pushed into it; in between the same objects are returned.
    ///
    /// - Throws: ``EventGraphError/Code/storeNotMounted`` when the store of the target entity's configuration (or of
    ///   a sub-entity's) is not mounted in the context's container, and the errors of ``ObjectContext/fetch(_:)``.
    public final func fetchedObjects(named name: String) throws(EventGraphError) -> [ManagedObject] {
        guard let context = contextStorage, let entityStorage else {
            preconditionFailure("\(self) belongs to no context; its fetched property '\(name)' cannot be fetched")
        }
        guard let property = entityStorage.fetchedProperty(named: name) else {
            preconditionFailure("\(entityStorage.name) has no fetched property named '\(name)'")
        }
        // A child's save into this context changes what the fetch sees as much as a commit beneath does.
        let stamp = context.parentStore.transactionStamp + [context.childSaveCount]
        if let cached = extras?.fetchedPropertyCaches[name], cached.transactionStamp == stamp {
            return context.objects(for: cached.references)
        }
        try context.requireMountedStores(for: property, of: entityStorage)
        let objects = try property.definition.fetch(self, context)
        extrasForWriting.fetchedPropertyCaches[name] = FetchedPropertyCache(
            transactionStamp: stamp, references: objects.map(context.reference(to:)))
        return objects
    }
}

extension ObjectContext {
    /// Refuses to evaluate a fetched property when a store that holds objects of its target entity (or of a
    /// sub-entity) is not mounted: the fetch would otherwise return a silent, partial result.
    func requireMountedStores(for property: FetchedPropertyDescription, of entity: EntityDescription)
        throws(EventGraphError)
    {
        let destination = model.entities[property.destinationEntityIndex]
        for index in destination.familyIndices {
            let configuration = model.configurationName(of: model.entities[index])
            guard !parentStore.isMounted(configuration: configuration) else { continue }
            throw EventGraphError(
                .storeNotMounted,
                "\(entity.name).\(property.name) fetches \(destination.name) objects, and the store of the "
                    + "configuration '\(configuration)' that holds \(model.entities[index].name) objects is not "
                    + "mounted in this container")
        }
    }
}
