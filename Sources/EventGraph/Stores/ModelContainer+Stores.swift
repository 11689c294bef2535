public import Foundation
import LogFormat

extension ModelContainer {
    /// Opens (or creates) one store per configuration of the model, as one container: a context of it reads
    /// and saves objects of every store.
    ///
    /// A new object goes to the store of its entity's configuration; a fetch spans every store that holds the
    /// entity or its sub-entities; an ``ObjectID`` names its store (``ObjectID/storeUUID``) and resolves there.
    /// Every store records the whole model (so the stores' logs number entities alike) and holds the objects of its
    /// configuration. The first time stores are opened together, each records the others' UUIDs in its log, so
    /// that a store file later replaced by another store's is refused.
    ///
    /// A save that touches one store costs what it costs in a container of one store. A save that touches several
    /// is atomic across them: it commits in all of them or in none, also across a crash (each store's changeset
    /// names the save and its participants; opening the stores together decides a save a crash left in some of
    /// them, and cuts it off the others' logs when one lacks it). A store whose log ends with such an undecided
    /// save refuses to open on its own for writing; a read-only view of it alone leaves that save out.
    ///
    /// A store given with ``StoreDescription/Mounting/never``, or with ``StoreDescription/Mounting/ifPresent`` and no
    /// file, is not mounted (``unmountedStores``): references into it stay unresolved until a container mounts it,
    /// and opening a container that mounts it again removes references to objects deleted meanwhile
    /// (``referenceCleanup``).
    ///
    /// Operations of one store (``compact()``, ``stateDigest()``, ``view(asOfTransaction:)``, ``path``, the change
    /// feed and transaction observation) act on the first store given; ``stateDigest(ofConfiguration:)`` takes any.
    ///
    /// - Throws: ``EventGraphError`` with code `invalidArgument` when the model has a configuration no store is
    ///   given for, a store names a configuration the model lacks, or two stores name one configuration;
    ///   `storeMismatch` when one store file is given twice (by any name, or as two copies) or a store file was
    ///   replaced by another store's; the errors of ``init(path:model:configuration:)`` for each store.
    public convenience init(
        model: ObjectModel, stores descriptions: [StoreDescription], configuration: Configuration = .init()
    )
        throws(EventGraphError)
    {
        let positions = try Self.storePositions(of: descriptions, model: model)
        try Self.requireDistinctFiles(descriptions)
        let mounted = try Self.mountedDescriptions(descriptions)
        var opened: [Store] = []
        let coordinator: StoreCoordinator
        do throws(EventGraphError) {
            for description in mounted {
                let path = description.path
                opened.append(
                    try Self.openMigratingIfNeeded(path: path, model: model, configuration: configuration) {
                        () throws(EventGraphError) in
                        try Self.openStore(path: path, model: model, configuration: configuration)
                    })
            }
            try Self.requireStoresBelongTogether(opened, mounted)
            try Self.decideSavesAcrossStores(&opened, mounted, model: model, configuration: configuration)
            try Self.link(opened)
            let placement = opened[0].model.entities.map { entity in
                let description = descriptions[positions[model.configurationName(of: entity)]!]
                return mounted.firstIndex(of: description).map(UInt32.init) ?? StoreCoordinator.unmountedPlacement
            }
            let unmounted = descriptions.filter { !mounted.contains($0) }.map(Self.unmountedStore)
            let cleanup = try StoreCoordinator(
                model: opened[0].model, stores: opened, placement: placement, unmounted: unmounted
            ).cleanUpBrokenReferences()
            coordinator = StoreCoordinator(
                model: opened[0].model, stores: opened, placement: placement, unmounted: unmounted,
                referenceCleanup: cleanup, crossStoreStepObserver: configuration.crossStoreStepObserver)
        } catch {
            Self.closeUndecided(opened, because: error.message)
            throw error
        }
        for store in opened {
            store.crossStoreParts.connect(
                opened, ledger: store.backend.crossStoreLedger, storeUUID: store.storeUUID.logUUID)
        }
        self.init(stores: opened, objectStore: coordinator, path: mounted[0].path)
        for (store, description) in zip(opened, mounted) {
            if let report = store.recoveryReport(path: description.path) { configuration.recoveryHandler?(report) }
        }
    }

    /// The UUID of the store that holds a configuration's objects; `nil` when the container has no such store.
    public func storeUUID(ofConfiguration name: String) -> UUID? {
        guard let coordinator = objectStore as? StoreCoordinator else {
            return name == ObjectModel.defaultConfigurationName || model.configurationNames.contains(name)
                ? storeUUID : nil
        }
        return coordinator.store(ofConfiguration: name)?.storeUUID
    }

    /// A digest of the live state of the store that holds a configuration's objects (see ``StateDigest``).
    ///
    /// - Throws: ``EventGraphError/Code/invalidArgument`` when the container has no store for `name`.
    public func stateDigest(ofConfiguration name: String) throws(EventGraphError) -> StateDigest {
        guard let uuid = storeUUID(ofConfiguration: name), let store = stores.first(where: { $0.storeUUID == uuid })
        else {
            throw EventGraphError(.invalidArgument, "the container has no store for the configuration '\(name)'")
        }
        return try store.stateDigest()
    }

    // MARK: - Checks before opening

    /// The position of each configuration's store among the descriptions.
    private static func storePositions(of descriptions: [StoreDescription], model: ObjectModel)
        throws(EventGraphError) -> [String: Int]
    {
        let configurations = model.configurationNames
        var positions: [String: Int] = [:]
        for (position, description) in descriptions.enumerated() {
            guard configurations.contains(description.configuration) else {
                throw EventGraphError(
                    .invalidArgument,
                    "\(description) names the configuration '\(description.configuration)', which the model "
                        + "'\(model.name)' lacks (it has \(configurations.map { "'\($0)'" }.joined(separator: ", ")))")
            }
            if let earlier = positions.updateValue(position, forKey: description.configuration) {
                throw EventGraphError(
                    .invalidArgument,
                    "\(descriptions[earlier]) and \(description) both hold the configuration "
                        + "'\(description.configuration)'; a configuration has one store")
            }
        }
        for name in configurations where positions[name] == nil {
            let entities = model.entities.filter { model.configurationName(of: $0) == name }.map(\.name)
            throw EventGraphError(
                .invalidArgument,
                "the configuration '\(name)' (\(entities.joined(separator: ", "))) has no store; give the container "
                    + "a StoreDescription for it")
        }
        return positions
    }

    /// Refuses one file given twice, under any name: the same path, a symbolic link to it, or a hard link.
    private static func requireDistinctFiles(_ descriptions: [StoreDescription]) throws(EventGraphError) {
        var seen: [StoreFileIdentity: StoreDescription] = [:]
        for description in descriptions {
            let identity = StoreFileIdentity(path: description.path)
            if let earlier = seen.updateValue(description, forKey: identity) {
                throw EventGraphError(
                    .storeMismatch,
                    "\(earlier) and \(description) are one file (\(identity)); each configuration needs a store "
                        + "of its own")
            }
        }
    }

    // MARK: - Checks after opening

    /// Refuses stores that do not belong together: two copies of one store (one UUID), stores that number the
    /// model's entities differently, and a store whose log records other sibling stores than the ones given.
    private static func requireStoresBelongTogether(_ stores: [Store], _ descriptions: [StoreDescription])
        throws(EventGraphError)
    {
        var positionByUUID: [UUID: Int] = [:]
        for (position, store) in stores.enumerated() {
            if let earlier = positionByUUID.updateValue(position, forKey: store.storeUUID) {
                throw EventGraphError(
                    .storeMismatch,
                    "\(descriptions[earlier]) and \(descriptions[position]) are the same store (UUID "
                        + "\(store.storeUUID)): one store file given twice, or a copy of one")
            }
            let order = store.model.entities.map(\.name)
            guard order == stores[0].model.entities.map(\.name) else {
                throw EventGraphError(
                    .modelMismatch,
                    "\(descriptions[position]) records the model's entities in another order than "
                        + "\(descriptions[0]) (\(order.joined(separator: ", "))); the stores cannot share references")
            }
        }
        let mounted = Set(stores.map { $0.storeUUID.logUUID })
        for (position, store) in stores.enumerated() {
            let known = store.state.withLock { $0.foreignStores }
            let strangers = known.filter { !mounted.contains($0) }
            let unknown = stores.indices.filter { $0 != position && !known.contains(stores[$0].storeUUID.logUUID) }
            guard let stranger = strangers.first, let replaced = unknown.first else { continue }
            throw EventGraphError(
                .storeMismatch,
                "\(descriptions[position]) belongs with store \(UUID(logUUID: stranger)), but \(descriptions[replaced]) "
                    + "is store \(stores[replaced].storeUUID): was that file replaced by another store's file? "
                    + "(open it with the store it belongs with, or each store on its own)")
        }
    }

    /// Records in each store's log the UUIDs of the stores opened with it that it does not know yet (one
    /// transaction without operations, whose changeset's table of foreign stores names them).
    private static func link(_ stores: [Store]) throws(EventGraphError) {
        for store in stores where !store.isReadOnly {
            let known = store.state.withLock { $0.foreignStores }
            let missing = stores.map { $0.storeUUID.logUUID }.filter {
                $0 != store.storeUUID.logUUID && !known.contains($0)
            }
            guard !missing.isEmpty else { continue }
            var request = CommitRequest(author: linkAuthor, operations: [], readRows: [:], mergePolicy: .error)
            request.foreignStores = missing
            _ = try store.commit(request)
        }
    }

    /// The author of the transaction that records a store's siblings.
    static let linkAuthor = "eventgraph.stores"
}

/// Which file a path names, for telling whether two paths are one store: the device and inode of an existing file
/// (through any symbolic link), else the path with its symbolic links resolved.
private enum StoreFileIdentity: Hashable, CustomStringConvertible {
    case file(device: UInt64, inode: UInt64)
    case missing(resolvedPath: String)

    init(path: String) {
        let resolved = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        let attributes = try? FileManager.default.attributesOfItem(atPath: resolved)
        if let device = (attributes?[.systemNumber] as? NSNumber)?.uint64Value,
            let inode = (attributes?[.systemFileNumber] as? NSNumber)?.uint64Value
        {
            self = .file(device: device, inode: inode)
        } else {
            self = .missing(resolvedPath: resolved)
        }
    }

    var description: String {
        switch self {
        case .file(let device, let inode): "device \(device), inode \(inode)"
        case .missing(let path): path
        }
    }
}
