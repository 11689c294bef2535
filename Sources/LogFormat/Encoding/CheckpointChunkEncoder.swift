/// Writes the payload of a checkpoint chunk field by field, for a writer whose objects are not ``ObjectRecord``s
/// (the object layer's columns): the bytes are exactly those of ``CheckpointChunk/encoded()`` for the records the
/// calls describe, so the format does not depend on which of the two wrote a chunk.
///
/// Calls come in the payload's order: ``init(foreignStores:recordCount:reservedByteCount:)``, then per record
/// ``beginRecord(_:)``, a property index and a value per property (``writePropertyIndex(_:)`` then one of the
/// `write…` value calls), ``endRecord()``; then ``finish()``. Every limit the record encoder checks is checked here,
/// with the same error.
package struct CheckpointChunkEncoder {
    private var writer: ByteWriter
    private let foreignStoreCount: Int
    private let recordCount: Int
    private var recordsWritten = 0
    /// Where the current record's property count goes (one byte is reserved; a count of 128 or more moves the
    /// properties up to make room for its longer varint).
    private var propertyCountOffset = -1
    private var propertyCount = 0

    /// Starts a chunk of `recordCount` records whose references may name `foreignStores`, written into an array
    /// taken from `arrays` when given (the rewrite hands it back once the chunk is compressed).
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when either list is over its limit.
    package init(
        foreignStores: [LogUUID], recordCount: Int, reservedByteCount: Int = 4096, arrays: ByteArrayPool? = nil
    ) throws(LogFormatError) {
        writer =
            arrays.map { ByteWriter(reservedByteCount: reservedByteCount, from: $0) }
            ?? ByteWriter(reservedByteCount: reservedByteCount)
        foreignStoreCount = foreignStores.count
        self.recordCount = recordCount
        writer.writeUInt8(PayloadEnvelope.currentVersion)
        try LogUUID.encodeList(foreignStores, to: &writer, field: "the chunk's foreign stores")
        try writer.writeCount(recordCount, field: "the chunk's records")
    }

    /// Starts a record: its object's reference, then room for its property count.
    package mutating func beginRecord(_ object: ObjectReference) throws(LogFormatError) {
        precondition(propertyCountOffset < 0, "a record begins after the previous one ended")
        precondition(recordsWritten < recordCount, "a chunk of \(recordCount) records gets no more")
        try object.encode(to: &writer, foreignStoreCount: foreignStoreCount)
        propertyCountOffset = writer.byteCount
        propertyCount = 0
        writer.writeUInt8(0)
    }

    /// Writes the index of the next property (its value follows).
    @inline(__always)
    package mutating func writePropertyIndex(_ index: Int) throws(LogFormatError) {
        precondition(propertyCountOffset >= 0, "a property belongs to a record")
        guard index < LogLimits.maxPropertyCount else {
            throw LogFormatError(
                .limitExceeded,
                "property index \(index) is not below the limit of \(LogLimits.maxPropertyCount) properties")
        }
        writer.writeVarUInt(UInt64(index))
        propertyCount += 1
    }

    /// Writes an attribute value as ``AttributeValue`` encodes it (for values that are not bytes in an arena).
    package mutating func writeAttribute(_ value: AttributeValue) throws(LogFormatError) {
        try value.encode(to: &writer)
    }

    /// Writes a string, URL, decimal, binary or transformable value from its bytes (a text value's bytes must be
    /// the UTF-8 its `String` would have: the caller checks).
    package mutating func writeBytes(_ kind: ByteValueKind, _ bytes: UnsafeRawBufferPointer) throws(LogFormatError) {
        let (tag, limit, field): (AttributeValue.EncodingTag, Int, StaticString) =
            switch kind {
            case .string: (.string, LogLimits.maxStringByteCount, "a string attribute value")
            case .url: (.url, LogLimits.maxStringByteCount, "a URL attribute value")
            case .decimal: (.decimal, LogLimits.maxStringByteCount, "a decimal attribute value")
            case .binary: (.binary, LogLimits.maxBinaryByteCount, "a binary attribute value")
            case .transformable: (.transformable, LogLimits.maxBinaryByteCount, "a transformable attribute value")
            }
        guard bytes.count <= limit else {
            let unit = limit == LogLimits.maxStringByteCount ? " of UTF-8" : ""
            throw LogFormatError(
                .limitExceeded, "\(field) is \(bytes.count) bytes\(unit), more than the limit of \(limit)")
        }
        writer.writeUInt8(tag.rawValue)
        writer.writeVarUInt(UInt64(bytes.count))
        writer.writeBytes(bytes)
    }

    /// Writes a to-one value (`nil`: no object).
    package mutating func writeToOne(_ target: ObjectReference?) throws(LogFormatError) {
        try PropertyValue.toOne(target).encode(to: &writer, foreignStoreCount: foreignStoreCount)
    }

    /// Writes a to-many value: its targets in their stored order.
    package mutating func writeToMany(_ targets: UnsafeBufferPointer<ObjectReference>) throws(LogFormatError) {
        writer.writeUInt8(PropertyValue.RelationshipTag.toMany.rawValue)
        try writer.writeCount(targets.count, field: "a to-many value")
        for target in targets { try target.encode(to: &writer, foreignStoreCount: foreignStoreCount) }
    }

    /// Ends a record: writes its property count in the room left for it.
    package mutating func endRecord() throws(LogFormatError) {
        precondition(propertyCountOffset >= 0, "a record ends after it began")
        guard propertyCount <= LogLimits.maxPropertyCount else {
            throw LogFormatError(
                .limitExceeded,
                "a list of property values has \(propertyCount) elements, more than the limit of "
                    + "\(LogLimits.maxPropertyCount)")
        }
        writer.patchVarUInt(UInt64(propertyCount), reservedByteAt: propertyCountOffset)
        propertyCountOffset = -1
        recordsWritten += 1
    }

    /// The payload.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when it is larger than ``LogLimits/maxTransactionByteCount``,
    ///   as ``CheckpointChunk/encoded()`` throws.
    package func finish() throws(LogFormatError) -> [UInt8] {
        precondition(
            propertyCountOffset < 0 && recordsWritten == recordCount,
            "a chunk of \(recordCount) records ends after its last record, not after \(recordsWritten)")
        let maxByteCount = LogLimits.maxTransactionByteCount
        guard writer.byteCount <= maxByteCount else {
            throw LogFormatError(
                .limitExceeded,
                "the encoded checkpoint chunk is \(writer.byteCount) bytes, more than the limit of \(maxByteCount)")
        }
        return writer.bytes
    }
}
