import LogFormat

extension StoreCoordinator {
    /// Commits a context's changes: one changeset per store the request touches, each in its store's numbering.
    ///
    /// A request that touches one store is that store's commit, as with a container of one store (the changeset
    /// carries a table of foreign stores only when it refers to another store, and no cross-store record). One that
    /// touches several is atomic across them (``commitAcrossStores(_:)``).
    func commit(_ request: CommitRequest) throws(EventGraphError) -> CommitResult {
        try requireMounted(request)
        let parts = split(request)
        // A save of several stores commits in all or none of them; one of a single store is that store's commit.
        if parts.count > 1 { return try commitAcrossStores(parts) }
        var result = CommitResult(transactionID: 0, rows: [], permanentIdentities: [:])
        for (storeIndex, part) in parts.sorted(by: { $0.key < $1.key }) {
            let committed = try stores[Int(storeIndex)].commit(part)
            merge(committed, fromStoreAt: storeIndex, into: &result)
        }
        result.transactionID = lastTransactionID
        return result
    }

    /// The request's operations, read rows and upserts grouped by the store of the object each one names, with
    /// every reference in that store's numbering.
    private func split(_ request: CommitRequest) -> [UInt32: CommitRequest] {
        var localizations: [UInt32: StoreLocalization] = [:]
        var parts: [UInt32: CommitRequest] = [:]
        let emptyPart = CommitRequest(
            author: request.author, operations: [], readRows: [:], mergePolicy: request.mergePolicy)
        /// Runs `body` with the localization of a store, taken out of the table while it runs (so that what it adds
        /// is not copied), made on first use.
        func localizing<R>(_ storeIndex: UInt32, _ body: (inout StoreLocalization) -> R) -> R {
            var localizer =
                localizations.removeValue(forKey: storeIndex)
                ?? {
                    precondition(
                        Int(storeIndex) < stores.count,
                        "a save names an object of store \(storeUUIDs[Int(storeIndex)]), which is not mounted")
                    return StoreLocalization(
                        ownIndex: storeIndex, storeUUIDs: storeLogUUIDs,
                        knownForeignStores: stores[Int(storeIndex)].state.withLock { $0.foreignStores })
                }()
            defer { localizations[storeIndex] = localizer }
            return body(&localizer)
        }
        // Each part is appended to in place: a part copied out of the table and written back copied its operations
        // for every operation appended (a save of n objects across stores copied n²/2 operations).
        for operation in request.operations {
            let storeIndex = operation.object.storeIndex
            let local = localizing(storeIndex) { $0.toLocal(operation) }
            parts[storeIndex, default: emptyPart].operations.append(local)
        }
        for (identity, row) in request.readRows {
            let local = localizing(identity.storeIndex) { $0.toLocal(row) }
            parts[identity.storeIndex, default: emptyPart].readRows[
                ObjectIdentity(storeIndex: Store.ownStoreIndex, key: identity.key)] = local
        }
        for (identity, ordinal) in request.upserts {
            parts[identity.storeIndex]?.upserts[ObjectIdentity(storeIndex: Store.ownStoreIndex, key: identity.key)] =
                ordinal
        }
        for (storeIndex, localizer) in localizations where localizer.namesOtherStores {
            parts[storeIndex]?.foreignStores = localizer.foreignStores
        }
        return parts
    }

    /// Adds one store's commit result to the coordinator's, in the coordinator's numbering.
    func merge(_ committed: CommitResult, fromStoreAt storeIndex: UInt32, into result: inout CommitResult) {
        let numbering = numbering(ofStoreAt: storeIndex)
        result.storeTransactionIDs[storeIndex] = committed.transactionID
        func identity(_ local: ObjectIdentity) -> ObjectIdentity {
            ObjectIdentity(storeIndex: storeIndex, key: local.key)
        }
        // Each store's rows name objects of that store only: appended, they stay one row per object.
        result.rows.reserveCapacity(result.rows.count + committed.rows.count)
        for (local, row) in committed.rows {
            result.rows.append(
                (
                    identity(local),
                    row.map {
                        numbering.toCoordinator($0, hasRelationships: hasRelationships(ofEntity: $0.entityIndex))
                    }
                ))
        }
        for (inserted, permanent) in committed.permanentIdentities {
            result.permanentIdentities[identity(inserted)] = identity(permanent)
        }
    }
}

extension ChangeOperation {
    /// The object the operation changes.
    var object: ObjectReference {
        switch self {
        case .insert(let reference, _), .update(let reference, _), .relate(let reference, _, _, _),
            .delete(let reference):
            reference
        }
    }
}
