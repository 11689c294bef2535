import LogFormat

extension StoreState {
    /// The canonical digest of the live state (see ``StateDigest``): the one digest of the engine, so the library's
    /// (``ModelContainer/stateDigest()``), the compaction check's and `egctl replay`'s agree by construction.
    ///
    /// Objects are visited in (entity name, key) order, properties in name order; unordered to-many targets are
    /// sorted by (store UUID, entity name, key); references name stores by UUID and entities by name. Transient
    /// attributes are not part of the state.
    ///
    /// - Parameter helperThread: as in ``digest(model:helperThread:stoppingWhen:)``.
    func digest(model: ObjectModel, helperThread: Bool = false) -> StateDigest {
        digest(model: model, helperThread: helperThread, stoppingWhen: { false })!
    }

    /// The digest as ``digest(model:)`` computes it, or `nil` once `isCancelled` returns `true` (asked before each
    /// chunk of objects is hashed): a compaction that its store's close cancels stops its digest too.
    ///
    /// - Parameter helperThread: whether a large entity's words may be made ahead by a thread of the digest's own
    ///   (``DigestBatches``) while this thread hashes them: for a caller that leaves a core idle meanwhile (`egctl
    ///   replay` after its replay, ``Store/stateDigest()``), not for one beside other work (compaction's digest).
    func digest(
        model: ObjectModel, helperThread: Bool = false, stoppingWhen isCancelled: () -> Bool
    ) -> StateDigest? {
        var hasher = DigestHasher()
        hasher.combine(integer: UInt64(objectCount))
        for entityIndex in Self.digestOrder(of: model) {
            combineDigest(
                ofEntity: entityIndex, model: model, into: &hasher, helperThread: helperThread,
                stoppingWhen: isCancelled)
            if isCancelled() { return nil }
        }
        return StateDigest(value: hasher.state)
    }

    /// The entities' indices in the order the digest visits them (by name).
    static func digestOrder(of model: ObjectModel) -> [Int] {
        model.entities.indices.sorted { model.entities[$0].name < model.entities[$1].name }
    }

    /// Adds the live objects of one entity to `hasher` as ``digest(model:)`` does: a digest is the live object
    /// count, then this for each entity in ``digestOrder(of:)``. A caller that holds the state in parts (a
    /// live-state migration's windows, each a key range of entities in that order) continues one hasher across them.
    /// It stops, the hasher's state then meaningless, once `isCancelled` returns `true` (asked before each chunk).
    func combineDigest(
        ofEntity entityIndex: Int, model: ObjectModel, into hasher: inout DigestHasher, helperThread: Bool = false,
        stoppingWhen isCancelled: () -> Bool = { false }
    ) {
        let words = EntityDigestWords(state: self, entityIndex: entityIndex, model: model)
        if helperThread, let batches = DigestBatches(words) {
            batches.combine(into: &hasher, stoppingWhen: isCancelled)
        } else {
            _ = words.combine(objects: 0..<words.objectCount, into: &hasher, stoppingWhen: isCancelled)
        }
    }

    /// Adds the attribute value in a slot of a column to `hasher` exactly as `DigestHasher.combine(_:)` adds the
    /// decoded ``AttributeValue``: fixed-width values from their bit pattern, binaries and ASCII text from the
    /// arena's bytes (the words a string's UTF-8 gives); other text (whose bytes decoding would repair if they were
    /// not UTF-8) and the rare values are decoded first.
    @inline(__always)
    static func combineDigest<Sink: DigestWordSink>(
        of column: UnsafePointer<Column>, tag: ValueTag, at slot: Int, into hasher: inout Sink
    ) {
        if tag.isFixedWidth {
            hasher.combine(fixedWidth: tag, column.pointee.words[slot])
            return
        }
        guard tag.isBytes else {
            hasher.combine(Column.attributeValueUnlessRelationship(of: column, at: slot) ?? .null)
            return
        }
        // An arena whose every byte is ASCII (the usual one) answers for all its values: none is scanned again.
        let arenaIsASCII = column.pointee.arena.isASCII
        Column.withArenaBytes(of: column, at: slot) { bytes in
            if tag == .binary || tag == .transformable || arenaIsASCII || ByteArena.isASCII(bytes) {
                hasher.combine(byteValue: tag, bytes)
            } else {
                hasher.combine(AttributeValue(bytes: tag, bytes))
            }
        }
    }
}
