/// What a container of several stores cleaned up when it opened: references from one mounted store to objects of
/// another that no longer exist (deleted while the referring store was not mounted, so the delete could not
/// remove the reference on that side).
///
/// The cleanup is one transaction in each store that held such references (author ``author``); a container whose
/// references all resolve writes nothing.
public struct ReferenceCleanupReport: Sendable, Hashable {
    /// One reference removed.
    public struct CleanedReference: Sendable, Hashable, CustomStringConvertible {
        /// The object that held the reference.
        public let source: ObjectID
        /// The relationship of `source` that held it.
        public let relationshipName: String
        /// The object it pointed to, which no longer exists.
        public let target: ObjectID

        public var description: String { "\(source.uriString).\(relationshipName) → \(target.uriString)" }
    }

    /// The author recorded on a cleanup's transactions.
    public static let author = "eventgraph.cleanup"

    /// The references removed, in the order of the stores, entities and objects that held them.
    public let cleanedReferences: [CleanedReference]

    /// Whether nothing was cleaned up.
    public var isEmpty: Bool { cleanedReferences.isEmpty }
}
