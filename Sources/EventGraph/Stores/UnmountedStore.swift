public import Foundation

/// A store that a container knows of but has not opened: one given with ``StoreDescription/Mounting/never``, one
/// given with ``StoreDescription/Mounting/ifPresent`` whose file is missing, or one that a mounted store's log
/// refers to and that the container was not given.
///
/// Objects of the mounted stores keep their references into it; they resolve again when a container mounts it.
public struct UnmountedStore: Sendable, Hashable, CustomStringConvertible {
    /// The store's UUID (``ObjectID/storeUUID`` of its objects); `nil` when it is not known (a missing file that no
    /// mounted store's log refers to).
    public let storeUUID: UUID?
    /// The configuration whose objects it holds, when the container knows it.
    public let configuration: String?
    /// Where the container was told the store is, when it was.
    public let path: String?

    public var description: String {
        var words = ["the unmounted store"]
        if let configuration { words.append("of the configuration '\(configuration)'") }
        if let storeUUID { words.append(storeUUID.uuidString) }
        if let path { words.append("(\(path))") }
        return words.joined(separator: " ")
    }
}

/// A reference from an object of a mounted store to an object of an unmounted one: the relationship holds it and a
/// save keeps it, but it does not resolve to an object until the target's store is mounted.
public struct UnresolvedReference: Sendable, Hashable, CustomStringConvertible {
    /// The relationship that holds the reference.
    public let relationshipName: String
    /// The target's permanent ID.
    public let target: ObjectID
    /// The store that holds the target.
    public let store: UnmountedStore

    public var description: String { "\(relationshipName) → \(target.uriString) in \(store)" }
}
