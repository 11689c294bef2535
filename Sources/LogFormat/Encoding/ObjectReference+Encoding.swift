// An object reference is three unsigned varints: store index, entity index, key.

extension ObjectReference {
    /// The fewest bytes an encoded reference takes (three one-byte varints).
    static let minimumEncodedByteCount = 3

    /// Appends the three varints.
    ///
    /// - Parameter foreignStoreCount: the number of foreign stores of the enclosing payload; ``storeIndex`` may
    ///   be at most this.
    /// - Throws: ``LogFormatError/Code/invalidArgument`` when the store index names no store of the payload,
    ///   ``LogFormatError/Code/limitExceeded`` when the entity index is not below ``LogLimits/maxEntityCount``.
    func encode(to writer: inout ByteWriter, foreignStoreCount: Int) throws(LogFormatError) {
        guard Int(storeIndex) <= foreignStoreCount else {
            throw LogFormatError(
                .invalidArgument,
                "an object reference has store index \(storeIndex), but the payload lists only "
                    + "\(foreignStoreCount) foreign store(s)")
        }
        guard Int(entityIndex) < LogLimits.maxEntityCount else {
            throw LogFormatError(
                .limitExceeded,
                "an object reference has entity index \(entityIndex), not below the limit of "
                    + "\(LogLimits.maxEntityCount) entities")
        }
        writer.writeVarUInt(UInt64(storeIndex))
        writer.writeVarUInt(UInt64(entityIndex))
        writer.writeVarUInt(key)
    }

    /// Reads the three varints, checking the store index against the payload's foreign stores.
    init(from reader: inout ByteReader, foreignStoreCount: Int) throws(LogFormatError) {
        let storeOffset = reader.offset
        let storeIndex = try reader.readVarUInt("an object reference's store index")
        guard storeIndex <= UInt64(foreignStoreCount) else {
            throw reader.malformed(
                "an object reference has store index \(storeIndex), but the payload lists only "
                    + "\(foreignStoreCount) foreign store(s)",
                at: storeOffset)
        }
        let entityIndex = try reader.readIndex("an object reference's entity index", below: LogLimits.maxEntityCount)
        let key = try reader.readVarUInt("an object reference's key")
        self.init(storeIndex: UInt32(truncatingIfNeeded: storeIndex), entityIndex: entityIndex, key: key)
    }

    /// Appends a count and the references.
    static func encodeList(
        _ references: [ObjectReference], to writer: inout ByteWriter, foreignStoreCount: Int,
        field: @autoclosure () -> String
    ) throws(LogFormatError) {
        try writer.writeCount(references.count, field: field())
        for reference in references {
            try reference.encode(to: &writer, foreignStoreCount: foreignStoreCount)
        }
    }

    /// Reads a count and that many references.
    static func decodeList(
        from reader: inout ByteReader, foreignStoreCount: Int, _ field: StaticString
    ) throws(LogFormatError) -> [ObjectReference] {
        let count = try reader.readCount(field, minimumElementByteCount: minimumEncodedByteCount)
        var references: [ObjectReference] = []
        references.reserveCapacity(count)
        for _ in 0..<count {
            references.append(try ObjectReference(from: &reader, foreignStoreCount: foreignStoreCount))
        }
        return references
    }

    /// Reads what ``decodeList(from:foreignStoreCount:_:)`` reads and lends the references to `body` in a buffer
    /// valid only during the call (on the stack for a short list) instead of returning an array.
    static func withDecodedList<R>(
        from reader: inout ByteReader, foreignStoreCount: Int, _ field: StaticString,
        _ body: (UnsafeBufferPointer<ObjectReference>) -> R
    ) throws(LogFormatError) -> R {
        // The count is bounded by the bytes left in the payload (3 bytes a reference at least).
        let count = try reader.readCount(field, minimumElementByteCount: minimumEncodedByteCount)
        return try withUnsafeTemporaryAllocation(of: ObjectReference.self, capacity: count) {
            (buffer) throws(LogFormatError) -> R in
            // A reference is trivial: a buffer left partly initialized by an error needs no deinitialization.
            for index in 0..<count {
                buffer.initializeElement(
                    at: index, to: try ObjectReference(from: &reader, foreignStoreCount: foreignStoreCount))
            }
            return body(UnsafeBufferPointer(buffer))
        }
    }
}
