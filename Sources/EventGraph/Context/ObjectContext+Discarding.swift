import LogFormat

/// Discarding unsaved changes: rollback, reset and refreshing objects from the store.
extension ObjectContext {
    /// Discards every unsaved change: inserted objects leave the context, deleted and changed ones revert.
    ///
    /// It reads nothing from the store and cannot fail. Its report (``ContextChanges/Reason/rolledBack``) carries
    /// the committed values each changed object holds again; where the object's checkpoint chunk cannot be read
    /// (damaged, or a read that failed), the report names the object and its changed keys without their values.
    public func rollback() {
        applyDeferredInverseAppends()
        for object in insertedList where object.flags.contains(.isInserted) {
            registered[object.identity] = nil
            object.contextStorage = nil
            // It leaves without a detachment, so nothing would keep its entity alive (see `entityStorage`); a dead
            // object reads its class's defaults without it.
            object.entityStorage = nil
            object.flags = [.isDead]
            object.pending.removeAll()
        }
        for object in changedList + deletedList where !object.flags.contains(.isDead) {
            object.pending.removeAll()
            object.flags.remove([.isDeleted, .isListedAsChanged])
        }
        insertedList.removeAll()
        changedList.removeAll()
        deletedList.removeAll()
        upsertKeys.removeAll()
        reportRollback()
    }

    /// Forgets every object: unsaved changes are discarded and the objects must no longer be used.
    public func reset() {
        applyDeferredInverseAppends()
        let detachment = Detachment(storeUUIDs: parentStore.storeUUIDs, contextName: name, reason: .reset, model: model)
        for object in registered.values + registered.displaced {
            object.detach(detachment)
            object.contextStorage = nil
            object.flags = [.isDead]
            object.pending.removeAll()
            object.row = nil
        }
        registered.removeAll()
        lookupCache.release()
        checkpointColumns.release()
        insertedList.removeAll()
        changedList.removeAll()
        deletedList.removeAll()
        upsertKeys.removeAll()
    }

    /// Turns an object back into a fault so its next read sees the store's latest committed values.
    ///
    /// - Parameters:
    ///   - object: an object of this context.
    ///   - mergeChanges: keep the object's unsaved changes (re-applied over the new values); when `false` (the
    ///     default) they are discarded. Externally stored values are dropped from memory either way.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool = false) {
        precondition(object.contextStorage === self, "\(object) does not belong to this context")
        guard !object.flags.contains(.isInserted) else { return }
        if mergeChanges {
            object.row = nil
            object.loadedBlobs.removeAll()
            object.fetchedPropertyCaches.removeAll()
            object.flags.insert(.isFault)
        } else {
            object.turnIntoFault(keepingTransients: true)
            object.flags.remove(.isDeleted)
        }
    }

    /// Refreshes every registered object without unsaved changes.
    public func refreshAllObjects() {
        for object in registered.values where object.pending.isEmpty && !object.flags.contains(.isInserted) {
            object.turnIntoFault(keepingTransients: true)
        }
    }
}
