import LogFormat
import Synchronization

/// A digest of a store's live state: every object's entity, key, attribute values (external values by content)
/// and relationships, in a canonical encoding hashed with 128-bit FNV-1a.
///
/// Two stores with the same objects and values have the same digest whatever their history; compaction
/// compares it before replacing a log, and `egctl` prints it.
public struct StateDigest: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes of the digest.
    public let bytes: [UInt8]

    /// Wraps digest bytes.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Lower-case hex.
    public var description: String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

extension StoreState {
    /// Computes the digest of the live state; `readBlob` supplies the bytes of external values.
    func digest(model: ObjectModel, readBlob: (BlobReference) throws(EventGraphError) -> [UInt8])
        throws(EventGraphError) -> StateDigest
    {
        var rows: [Row] = []
        rows.reserveCapacity(objectCount)
        for table in tables { rows.append(contentsOf: table.liveRows) }
        rows.sort { $0.key < $1.key }
        var hasher = StableHasher128()
        hasher.combine(UInt64(rows.count))
        for row in rows {
            let entity = model.entities[row.entityIndex]
            hasher.combine(row.key)
            hasher.combine(entity.name)
            for property in entity.properties where property.isPersistent {
                hasher.combine(property.name)
                switch row.values[property.attribute?.index ?? property.relationship!.index] {
                case .attribute(let value):
                    hasher.combine(0)
                    if case .blob(let reference) = value {
                        let bytes = try readBlob(reference)
                        Self.combine(property.attribute?.type == .transformable ? .transformable(bytes) : .binary(bytes), into: &hasher)
                    } else {
                        Self.combine(value, into: &hasher)
                    }
                case .toOne(let reference):
                    hasher.combine(1)
                    hasher.combine(reference.map { $0.key } ?? 0)
                case .toMany(let references):
                    hasher.combine(2)
                    let keys = property.relationship?.isOrdered == true ? references.map(\.key) : references.map(\.key).sorted()
                    hasher.combine(UInt64(keys.count))
                    for key in keys { hasher.combine(key) }
                }
            }
        }
        return StateDigest(bytes: hasher.bytes)
    }

    private static func combine(_ value: AttributeValue, into hasher: inout StableHasher128) {
        switch value {
        case .null: hasher.combine(0)
        case .int16(let v): hasher.combine(1); hasher.combine(UInt64(bitPattern: Int64(v)))
        case .int32(let v): hasher.combine(2); hasher.combine(UInt64(bitPattern: Int64(v)))
        case .int64(let v): hasher.combine(3); hasher.combine(UInt64(bitPattern: v))
        case .double(let v): hasher.combine(4); hasher.combine(v.bitPattern)
        case .float(let v): hasher.combine(5); hasher.combine(UInt64(v.bitPattern))
        case .bool(let v): hasher.combine(6); hasher.combine(v ? 1 : 0)
        case .string(let v): hasher.combine(7); hasher.combine(v)
        case .date(let v): hasher.combine(8); hasher.combine(v.bitPattern)
        case .uuid(let v): hasher.combine(9); hasher.combine(v.high); hasher.combine(v.low)
        case .url(let v): hasher.combine(10); hasher.combine(v)
        case .decimal(let v): hasher.combine(11); hasher.combine(v)
        case .binary(let v): hasher.combine(12); hasher.combine(UInt64(v.count)); hasher.combine(bytes: v)
        case .transformable(let v): hasher.combine(13); hasher.combine(UInt64(v.count)); hasher.combine(bytes: v)
        case .blob(let r): hasher.combine(14); hasher.combine(r.byteCount)
        }
    }
}

extension Store {
    /// The digest of the committed state.
    func stateDigest() throws(EventGraphError) -> StateDigest {
        let snapshot = state.withLock { $0 }
        return try snapshot.digest(model: model) { reference throws(EventGraphError) in try readBlob(reference) }
    }
}
