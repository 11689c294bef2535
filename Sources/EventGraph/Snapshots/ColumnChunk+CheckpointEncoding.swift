import LogFormat

extension ColumnChunk {
    /// The checkpoint entity chunk of this chunk's live objects (format 1.3), encoded straight from the columns: no
    /// record, no ``PropertyValue`` and no `String` per value (ASCII text and binaries are copied from the arena as
    /// bytes). The payload is byte for byte what ``CheckpointChunk/encoded()`` writes for the records
    /// `StoreState.checkpointEntityChunks(model:nextKey:)` builds of the same chunk: each live object in slot order
    /// with its persistent values that differ from the model's defaults, compared as those values compare.
    ///
    /// The payload's bytes are written into an array taken from `arrays` when given (a compaction's
    /// ``ByteArrayPool``, to which the rewrite hands it back once compressed).
    ///
    /// - Precondition: at least one live slot.
    /// - Throws: what ``CheckpointChunk/encoded()`` throws for the same records (a value over its limit).
    func checkpointPayload(
        entityIndex: Int, entity: EntityDescription, foreignStores: [LogUUID], arrays: ByteArrayPool? = nil
    ) throws(LogFormatError) -> EntityChunkPayload {
        let liveCount = liveBits.reduce(0) { $0 + $1.nonzeroBitCount }
        precondition(liveCount > 0, "a chunk of entity #\(entityIndex) with no live object has no entity chunk")
        var encoder = try CheckpointChunkEncoder(
            foreignStores: foreignStores, recordCount: liveCount,
            reservedByteCount: Self.estimatedPayloadByteCount(of: columns, liveCount: liveCount), arrays: arrays)
        var minKey = UInt64.max
        var maxKey = UInt64.min
        let defaults = entity.defaultValues
        let persistent = entity.isPersistentProperty
        // The defaults of byte values as their comparisons need them, made once per chunk: taking a default's
        // `String` or array out of its `PropertyValue` retained and released it for every value.
        let byteDefaults = defaults.map(ByteDefault.init)
        // Columns are read through a pointer (`columns[i]` copies the whole column per value; see `Column`).
        try columns.withUnsafeBufferPointer { (buffer) throws(LogFormatError) in
            try byteDefaults.withUnsafeBufferPointer { (byteDefaults) throws(LogFormatError) in
                for (wordIndex, word) in liveBits.enumerated() where word != 0 {
                    var bits = word
                    while bits != 0 {
                        let slot = wordIndex * 64 + bits.trailingZeroBitCount
                        bits &= bits - 1
                        let key = keys[slot]
                        minKey = min(minKey, key)
                        maxKey = max(maxKey, key)
                        try encoder.beginRecord(ObjectReference(entityIndex: UInt32(entityIndex), key: key))
                        let count = Int(valueCounts[slot])
                        precondition(
                            count <= buffer.count, "slot \(slot) has \(count) values in \(buffer.count) columns")
                        for property in 0..<count where persistent[property] {
                            let column = buffer.baseAddress! + property
                            let tag = slot < column.pointee.tags.count ? column.pointee.tags[slot] : .absent
                            if tag.isBytes {
                                try Self.encodeBytes(
                                    of: column, tag, at: slot, property: property,
                                    default: byteDefaults.baseAddress! + property, into: &encoder)
                            } else {
                                try Self.encodeValue(
                                    of: column, tag, at: slot, property: property, default: defaults[property],
                                    into: &encoder)
                            }
                        }
                        try encoder.endRecord()
                    }
                }
            }
        }
        return EntityChunkPayload(
            entityIndex: UInt32(entityIndex), objectCount: liveCount, minKey: minKey, maxKey: maxKey,
            bytes: try encoder.finish())
    }

    /// Writes one slot's value that is not bytes in the arena (its tag is `tag`) with its property index, unless it
    /// equals the property's default (then nothing).
    @inline(__always)
    private static func encodeValue(
        of column: UnsafePointer<Column>, _ tag: ValueTag, at slot: Int, property: Int,
        default defaultValue: PropertyValue, into encoder: inout CheckpointChunkEncoder
    ) throws(LogFormatError) {
        switch tag {
        case .absent, .null:
            guard defaultValue != .attribute(.null) else { return }
            try encoder.writePropertyIndex(property)
            try encoder.writeAttribute(.null)
        case .int16, .int32, .int64, .double, .float, .bool, .date:
            let value = AttributeValue(fixedWidth: tag, column.pointee.words[slot])
            guard defaultValue != .attribute(value) else { return }
            try encoder.writePropertyIndex(property)
            try encoder.writeAttribute(value)
        case .string, .url, .decimal, .binary, .transformable:
            preconditionFailure("a byte value is written by encodeBytes")
        case .uuid, .blob:
            let value = Column.otherValue(of: column, at: slot)
            guard defaultValue != .attribute(value) else { return }
            try encoder.writePropertyIndex(property)
            try encoder.writeAttribute(value)
        case .toOneNil:
            guard defaultValue != .toOne(nil) else { return }
            try encoder.writePropertyIndex(property)
            try encoder.writeToOne(nil)
        case .toOne:
            let target = Column.toOneTarget(of: column, at: slot)
            guard defaultValue != .toOne(target) else { return }
            try encoder.writePropertyIndex(property)
            try encoder.writeToOne(target)
        case .toMany:
            let result = Column.withManyTargets(of: column, at: slot) {
                (targets) -> Result<Void, LogFormatError> in
                if case .toMany(let list) = defaultValue, list.elementsEqual(targets) { return .success(()) }
                return Result { () throws(LogFormatError) in
                    try encoder.writePropertyIndex(property)
                    try encoder.writeToMany(targets)
                }
            }
            try result.get()
        }
    }

    /// A property's default as the comparison of a byte value with it needs it.
    private struct ByteDefault {
        /// The default's tag when it is a byte value (``ValueTag/absent`` otherwise: no byte value equals it).
        var tag = ValueTag.absent
        /// The default's bytes: a text's UTF-8, a binary's bytes.
        var bytes: [UInt8] = []
        /// The default text, when it is text.
        var text: String?
        /// Whether the default is ASCII text.
        var isASCIIText = false

        init(_ value: PropertyValue) {
            switch value {
            case .attribute(.string(let text)): (tag, self.text) = (.string, text)
            case .attribute(.url(let text)): (tag, self.text) = (.url, text)
            case .attribute(.decimal(let text)): (tag, self.text) = (.decimal, text)
            case .attribute(.binary(let bytes)): (tag, self.bytes) = (.binary, bytes)
            case .attribute(.transformable(let bytes)): (tag, self.bytes) = (.transformable, bytes)
            default: break
            }
            if let text {
                bytes = Array(text.utf8)
                isASCIIText = bytes.allSatisfy { $0 < 0x80 }
            }
        }

        /// Whether `bytes` are the default's bytes.
        func hasBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
            self.bytes.count == bytes.count && self.bytes.elementsEqual(bytes)
        }
    }

    /// Writes a string, URL, decimal or binary value from the arena. ASCII text is written as its bytes; other
    /// text goes through a `String`, as the record encoder's does, so that its bytes and its comparison with the
    /// default (canonical equivalence) are the same. ASCII text is compared with an ASCII default byte for byte (two
    /// ASCII strings are equivalent only when equal), without a `String`; with another default, as decoded text.
    @inline(never)
    private static func encodeBytes(
        of column: UnsafePointer<Column>, _ tag: ValueTag, at slot: Int, property: Int,
        default byteDefault: UnsafePointer<ByteDefault>, into encoder: inout CheckpointChunkEncoder
    ) throws(LogFormatError) {
        // An arena whose every byte is ASCII (the usual one) answers for all its values: none is scanned again (the
        // scan was a third of this function's samples in h90's profile of compact-1m).
        let arenaIsASCII = column.pointee.arena.isASCII
        let result = Column.withArenaBytes(of: column, at: slot) { (bytes) -> Result<Void, LogFormatError> in
            let kind = ByteValueKind(tag) ?? .transformable
            let isText = tag == .string || tag == .url || tag == .decimal
            let isDefaultKind = byteDefault.pointee.tag == tag
            guard isText, !arenaIsASCII, !ByteArena.isASCII(bytes) else {
                if isDefaultKind {
                    let isDefault =
                        !isText || byteDefault.pointee.isASCIIText
                        ? byteDefault.pointee.hasBytes(bytes)
                        : AttributeValue(bytes: tag, bytes) == Self.text(tag, byteDefault.pointee.text!)
                    if isDefault { return .success(()) }
                }
                return Result { () throws(LogFormatError) in
                    try encoder.writePropertyIndex(property)
                    try encoder.writeBytes(kind, bytes)
                }
            }
            // Not ASCII: the `String` the record encoder would have made, and its UTF-8 (a repaired sequence
            // included).
            var text = String(decoding: bytes, as: UTF8.self)
            if isDefaultKind, text == byteDefault.pointee.text! { return .success(()) }
            return text.withUTF8 { utf8 in
                Result { () throws(LogFormatError) in
                    try encoder.writePropertyIndex(property)
                    try encoder.writeBytes(kind, UnsafeRawBufferPointer(utf8))
                }
            }
        }
        try result.get()
    }

    /// A text value of a byte tag.
    private static func text(_ tag: ValueTag, _ text: String) -> AttributeValue {
        switch tag {
        case .url: .url(text)
        case .decimal: .decimal(text)
        default: .string(text)
        }
    }

    /// A first guess at a chunk payload's size (the encoder grows past it when needed): the arena bytes, plus a
    /// few bytes per value.
    private static func estimatedPayloadByteCount(of columns: [Column], liveCount: Int) -> Int {
        var total = 64 + liveCount * 8
        for column in columns { total += column.arena.bytes.count + liveCount * 4 }
        return min(total, LogLimits.maxFrameRawByteCount)
    }
}
