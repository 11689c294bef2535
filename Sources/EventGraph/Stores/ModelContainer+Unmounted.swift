import Foundation
import LogFormat

extension ModelContainer {
    /// The stores this container has not mounted: those given with ``StoreDescription/Mounting/never``, those given
    /// with ``StoreDescription/Mounting/ifPresent`` whose files are missing, and those the mounted stores' logs refer
    /// to that the container was not given. Empty for a container of one store.
    ///
    /// Objects of the mounted stores keep their references into these stores: a relationship property reads only
    /// the targets that resolve, ``ObjectContext/unresolvedReferences(of:)`` lists the others, and a save that would
    /// change an object in one of these stores (an inverse, a cascade) is refused with
    /// ``EventGraphError/Code/storeNotMounted``. Inserting an object whose configuration's store is not mounted is a
    /// programmer error. To mount a store, open a container with it.
    public var unmountedStores: [UnmountedStore] {
        (objectStore as? StoreCoordinator)?.unmountedStores ?? []
    }

    /// The references that opening this container removed because their targets were deleted while the store
    /// holding the reference was not mounted (see ``ReferenceCleanupReport``).
    public var referenceCleanup: ReferenceCleanupReport {
        (objectStore as? StoreCoordinator)?.referenceCleanup ?? ReferenceCleanupReport(cleanedReferences: [])
    }

    /// Whether the store of a configuration is mounted.
    public func isMounted(configuration name: String) -> Bool {
        storeUUID(ofConfiguration: name) != nil
    }

    /// The stores to open: those to mount always, and those to mount if present whose file is there.
    static func mountedDescriptions(_ descriptions: [StoreDescription]) throws(EventGraphError) -> [StoreDescription] {
        let mounted = descriptions.filter { description in
            switch description.mounting {
            case .always: true
            case .ifPresent: FileManager.default.fileExists(atPath: description.path)
            case .never: false
            }
        }
        guard !mounted.isEmpty else {
            throw EventGraphError(
                .invalidArgument,
                "none of the stores given is mounted (\(descriptions.map(\.description).joined(separator: ", "))); "
                    + "a container needs at least one")
        }
        return mounted
    }

    /// An unmounted store as its description gives it, with its UUID read from its file's header when the file is
    /// a regular file with a readable header (a FIFO is not opened: opening one to read would wait for a writer).
    static func unmountedStore(_ description: StoreDescription) -> UnmountedStore {
        let resolved = URL(fileURLWithPath: description.path).resolvingSymlinksInPath().path
        let attributes = try? FileManager.default.attributesOfItem(atPath: resolved)
        var uuid: UUID?
        if attributes?[.type] as? FileAttributeType == .typeRegular,
            let reader = try? LogReader(path: resolved)
        {
            uuid = UUID(logUUID: reader.header.storeUUID)
        }
        return UnmountedStore(storeUUID: uuid, configuration: description.configuration, path: description.path)
    }
}
