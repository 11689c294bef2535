/// The type of an attribute, as recorded in the schema.
public enum AttributeType: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case int16 = 1
    case int32 = 2
    case int64 = 3
    case double = 4
    case float = 5
    case bool = 6
    case string = 7
    /// Seconds since 2001-01-01T00:00:00Z (Foundation's reference date), as a `Double`.
    case date = 8
    case uuid = 9
    /// An absolute URL, stored as its string.
    case url = 10
    /// A decimal number, stored as its canonical string so that no precision is lost.
    case decimal = 11
    case binary = 12
    /// Bytes produced by a named value transformer (named in the schema the log records).
    case transformable = 13

    public var description: String {
        switch self {
        case .int16: "Int16"
        case .int32: "Int32"
        case .int64: "Int64"
        case .double: "Double"
        case .float: "Float"
        case .bool: "Bool"
        case .string: "String"
        case .date: "Date"
        case .uuid: "UUID"
        case .url: "URL"
        case .decimal: "Decimal"
        case .binary: "Binary"
        case .transformable: "Transformable"
        }
    }
}

/// A typed attribute value as the log stores it.
public enum AttributeValue: Hashable, Sendable {
    case null
    case int16(Int16)
    case int32(Int32)
    case int64(Int64)
    case double(Double)
    case float(Float)
    case bool(Bool)
    case string(String)
    /// Seconds since 2001-01-01T00:00:00Z; the bit pattern is preserved exactly.
    case date(Double)
    case uuid(LogUUID)
    case url(String)
    case decimal(String)
    case binary([UInt8])
    /// Bytes of a binary or transformable attribute kept in a separate blob frame.
    case blob(BlobReference)
    case transformable([UInt8])
}

/// Where the bytes of an externally stored binary value are: the blob frame with this transaction ID and index.
///
/// Blob frames are written just before the frames of the transaction that introduces them. The reference is
/// logical (never a file offset), so it survives compaction; readers map it to an offset while replaying.
public struct BlobReference: Hashable, Sendable {
    /// The transaction whose blob frames hold the bytes.
    public var transactionID: UInt64
    /// The position of the blob among that transaction's blob frames (0-based).
    public var index: UInt32
    /// The length of the value in bytes.
    public var byteCount: UInt64

    /// Creates a reference to a blob.
    public init(transactionID: UInt64, index: UInt32, byteCount: UInt64) {
        self.transactionID = transactionID
        self.index = index
        self.byteCount = byteCount
    }
}
