public import Foundation

/// The identity of an object: its store, entity and key.
///
/// An inserted object has a *temporary* ID until its first save and a permanent one after; the key is the same,
/// so either finds the object. IDs are values: they cross isolation domains and are written in the log as
/// references (store UUID, entity, key), never as file offsets.
public struct ObjectID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The store that holds the object.
    public let storeUUID: UUID
    /// The object's entity.
    public let entityName: String
    /// The object's key, unique in its store and never reused.
    public let key: UInt64
    /// Whether the object has not been saved yet.
    public let isTemporary: Bool

    /// Creates an ID.
    public init(storeUUID: UUID, entityName: String, key: UInt64, isTemporary: Bool = false) {
        self.storeUUID = storeUUID
        self.entityName = entityName
        self.key = key
        self.isTemporary = isTemporary
    }

    /// The URI form: `eventgraph://<storeUUID>/<Entity>/<key>` (a temporary ID's key is prefixed with `t`).
    public var uriString: String {
        "eventgraph://\(storeUUID.uuidString)/\(entityName)/\(isTemporary ? "t" : "")\(key)"
    }

    /// The URI form as a URL.
    public var uriRepresentation: URL { URL(string: uriString)! }

    /// Parses the URI form that ``uriString`` prints, or returns `nil` when `uriString` is not one.
    public init?(uriString: String) {
        let prefix = "eventgraph://"
        guard uriString.hasPrefix(prefix) else { return nil }
        let parts = uriString.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let uuid = UUID(uuidString: String(parts[0])), !parts[1].isEmpty else { return nil }
        var keyText = parts[2]
        let isTemporary = keyText.hasPrefix("t")
        if isTemporary { keyText = keyText.dropFirst() }
        guard let key = UInt64(keyText) else { return nil }
        self.init(storeUUID: uuid, entityName: String(parts[1]), key: key, isTemporary: isTemporary)
    }

    /// Parses the URI form; `URL` percent-encodes an entity name with non-ASCII letters, which is decoded here.
    public init?(uri: URL) {
        self.init(uriString: uri.absoluteString.removingPercentEncoding ?? uri.absoluteString)
    }

    public var description: String { uriString }

    /// The permanent form of this ID.
    var permanent: ObjectID {
        ObjectID(storeUUID: storeUUID, entityName: entityName, key: key, isTemporary: false)
    }
}
