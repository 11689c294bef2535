// Decoding a checkpoint chunk without building its records: each value is handed to a visitor as it is read, a
// string or a binary value as the payload's own bytes (a string checked to be UTF-8 once), so that a reader that
// puts the values into columns builds no `PropertyValue` and no `String` per value. `CheckpointChunk(decoding:)`
// is this decoding with a visitor that collects the records, so the two cannot disagree.

/// The kinds of attribute values held as bytes (see ``BorrowedPropertyValue/bytes(_:_:isASCII:)``).
package enum ByteValueKind: Sendable {
    case string, url, decimal, binary, transformable
}

/// A property value as a checkpoint chunk's payload holds it, lent to a ``CheckpointChunkVisitor``.
package enum BorrowedPropertyValue {
    /// A value decoded whole: null, a fixed-width value, a UUID, a blob reference, or a to-one relationship.
    case value(PropertyValue)
    /// A string, URL or decimal (valid UTF-8), or a binary or transformable value: its bytes in the payload, valid
    /// only during the call that lends them. `isASCII` tells whether every byte is below 0x80 when the decoding found
    /// out (a string's, by its UTF-8 check); `nil` for a binary or transformable value, whose bytes are not checked.
    case bytes(ByteValueKind, UnsafeRawBufferPointer, isASCII: Bool?)
    /// The targets of a to-many relationship, decoded into a buffer valid only during the call that lends it (no
    /// array per list for a reader that copies them into its own storage).
    case toMany(UnsafeBufferPointer<ObjectReference>)

    /// The value as a ``PropertyValue`` (copies the bytes or the targets).
    package var materialized: PropertyValue {
        switch self {
        case .value(let value): value
        case .bytes(.string, let bytes, _): .attribute(.string(String(decoding: bytes, as: UTF8.self)))
        case .bytes(.url, let bytes, _): .attribute(.url(String(decoding: bytes, as: UTF8.self)))
        case .bytes(.decimal, let bytes, _): .attribute(.decimal(String(decoding: bytes, as: UTF8.self)))
        case .bytes(.binary, let bytes, _): .attribute(.binary(Array(bytes)))
        case .bytes(.transformable, let bytes, _): .attribute(.transformable(Array(bytes)))
        case .toMany(let targets): .toMany(Array(targets))
        }
    }
}

/// What receives a checkpoint chunk's contents as they are decoded, in payload order: the foreign stores, the
/// number of records, then each record's object and its property values. The calls do not throw: a visitor that
/// finds something it cannot use notes it and reports it once the decoding is done (a payload that does not decode
/// is reported first, as before).
package protocol CheckpointChunkVisitor {
    mutating func visitForeignStores(_ stores: [LogUUID])
    mutating func visitRecordCount(_ count: Int)
    mutating func visitRecord(_ object: ObjectReference)
    mutating func visitProperty(_ propertyIndex: UInt32, _ value: BorrowedPropertyValue)
    mutating func endRecord()
}

extension CheckpointChunk {
    /// Decodes a checkpoint chunk payload into `visitor` (the checks of ``init(decoding:)-([UInt8])``).
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem;
    ///   ``LogFormatError/Code/unsupportedVersion`` for a payload written by a newer format version.
    package static func visit(_ bytes: [UInt8], _ visitor: inout some CheckpointChunkVisitor) throws(LogFormatError) {
        try PayloadEnvelope.decode("checkpoint chunk", from: bytes, maxByteCount: LogLimits.maxTransactionByteCount) {
            (reader) throws(LogFormatError) in
            try visitFields(from: &reader, &visitor)
        }
    }

    /// The table of foreign stores a checkpoint chunk payload begins with (its first field), read without the
    /// records that follow it: the payload's size and version byte are checked as ``visit(_:_:)`` checks them, its
    /// records are not (their first full decoding does that).
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` when the table does not decode;
    ///   ``LogFormatError/Code/unsupportedVersion`` for a payload written by a newer format version.
    package static func foreignStores(ofPayload bytes: [UInt8]) throws(LogFormatError) -> [LogUUID] {
        try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) -> [LogUUID] in
            try PayloadEnvelope.decode(
                "checkpoint chunk", from: &reader, maxByteCount: LogLimits.maxTransactionByteCount,
                newestVersion: PayloadEnvelope.currentVersion, readsToEnd: false
            ) { (reader, _) throws(LogFormatError) -> [LogUUID] in
                try decodeForeignStores(from: &reader)
            }
        }
    }

    /// The table of foreign stores: the first field after the version byte (the one place it is decoded).
    private static func decodeForeignStores(from reader: inout ByteReader) throws(LogFormatError) -> [LogUUID] {
        try LogUUID.decodeList(from: &reader, "the number of foreign stores")
    }

    /// Reads the fields that follow the version byte into `visitor`.
    static func visitFields(from reader: inout ByteReader, _ visitor: inout some CheckpointChunkVisitor)
        throws(LogFormatError)
    {
        let foreignStores = try decodeForeignStores(from: &reader)
        visitor.visitForeignStores(foreignStores)
        // A record is at least a reference and an empty property list.
        let recordCount = try reader.readCount(
            "the number of records", minimumElementByteCount: ObjectReference.minimumEncodedByteCount + 1)
        visitor.visitRecordCount(recordCount)
        for _ in 0..<recordCount {
            visitor.visitRecord(try ObjectReference(from: &reader, foreignStoreCount: foreignStores.count))
            let count = try reader.readCount(
                "the number of property values", limit: LogLimits.maxPropertyCount,
                minimumElementByteCount: PropertyChange.minimumEncodedByteCount)
            for _ in 0..<count {
                let propertyIndex = try reader.readIndex("a property index", below: LogLimits.maxPropertyCount)
                try PropertyValue.visit(from: &reader, foreignStoreCount: foreignStores.count) { value in
                    visitor.visitProperty(propertyIndex, value)
                }
            }
            visitor.endRecord()
        }
    }
}

/// The visitor behind ``CheckpointChunk/init(decoding:)-([UInt8])``: collects the records.
package struct CheckpointChunkCollector: CheckpointChunkVisitor {
    private var foreignStores: [LogUUID] = []
    private var records: [ObjectRecord] = []
    private var current: ObjectRecord?

    package init() {}

    package mutating func visitForeignStores(_ stores: [LogUUID]) { foreignStores = stores }
    package mutating func visitRecordCount(_ count: Int) { records.reserveCapacity(count) }
    package mutating func visitRecord(_ object: ObjectReference) {
        current = ObjectRecord(object: object, properties: [])
    }
    package mutating func visitProperty(_ propertyIndex: UInt32, _ value: BorrowedPropertyValue) {
        current?.properties.append(PropertyChange(propertyIndex: propertyIndex, value: value.materialized))
    }
    package mutating func endRecord() {
        if let current { records.append(current) }
        current = nil
    }

    /// The chunk the calls described.
    package var chunk: CheckpointChunk { CheckpointChunk(foreignStores: foreignStores, records: records) }
}

extension PropertyValue {
    /// Reads a tag byte and the value it introduces, lending a byte value's bytes to `body` instead of copying them
    /// (the checks of ``init(from:foreignStoreCount:)``).
    static func visit(
        from reader: inout ByteReader, foreignStoreCount: Int, _ body: (BorrowedPropertyValue) -> Void
    ) throws(LogFormatError) {
        let tagOffset = reader.offset
        let tag = try reader.readUInt8("a property value's tag")
        let kind: ByteValueKind
        switch AttributeValue.EncodingTag(rawValue: tag) {
        case .string: kind = .string
        case .url: kind = .url
        case .decimal: kind = .decimal
        case .binary: kind = .binary
        case .transformable: kind = .transformable
        case nil where tag == PropertyValue.RelationshipTag.toMany.rawValue:
            // A to-many list is lent from a buffer (what `init(from:)` decodes into an array).
            return try ObjectReference.withDecodedList(
                from: &reader, foreignStoreCount: foreignStoreCount, "the number of to-many targets"
            ) { body(.toMany($0)) }
        default:
            // Every other value is decoded whole (`init(from:)` after its tag).
            let value: PropertyValue
            if tag <= AttributeValue.EncodingTag.reservedRangeUpperBound {
                value = .attribute(try AttributeValue(tag: tag, at: tagOffset, from: &reader))
            } else {
                value = try PropertyValue(
                    relationshipTag: tag, at: tagOffset, from: &reader, foreignStoreCount: foreignStoreCount)
            }
            return body(.value(value))
        }
        switch kind {
        case .string: try reader.withStringBytes("a string value") { body(.bytes(kind, $0, isASCII: $1)) }
        case .url: try reader.withStringBytes("a URL value") { body(.bytes(kind, $0, isASCII: $1)) }
        case .decimal: try reader.withStringBytes("a decimal value") { body(.bytes(kind, $0, isASCII: $1)) }
        case .binary: try reader.withByteArrayBytes("a binary value") { body(.bytes(kind, $0, isASCII: nil)) }
        case .transformable:
            try reader.withByteArrayBytes("a transformable value") { body(.bytes(kind, $0, isASCII: nil)) }
        }
    }
}
