import LogFormat

extension StoreState {
    /// The canonical digest of the live state (see ``StateDigest``): the one digest of the engine, so the library's
    /// (``ModelContainer/stateDigest()``), the compaction check's and `egctl replay`'s agree by construction.
    ///
    /// Objects are visited in (entity name, key) order, properties in name order; unordered to-many targets are
    /// sorted by (store UUID, entity name, key); references name stores by UUID and entities by name. Transient
    /// attributes are not part of the state.
    func digest(model: ObjectModel) -> StateDigest {
        digest(model: model, stoppingWhen: { false })!
    }

    /// The digest as ``digest(model:)`` computes it, or `nil` once `isCancelled` returns `true` (asked before each
    /// batch of objects is hashed): a compaction that its store's close cancels stops its digest too.
    func digest(model: ObjectModel, stoppingWhen isCancelled: () -> Bool) -> StateDigest? {
        var hasher = DigestHasher()
        hasher.combine(integer: UInt64(objectCount))
        for entityIndex in Self.digestOrder(of: model) {
            combineDigest(ofEntity: entityIndex, model: model, into: &hasher, stoppingWhen: isCancelled)
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
    /// It stops, the hasher's state then meaningless, once `isCancelled` returns `true` (asked before each batch of
    /// objects is hashed).
    ///
    /// The words are one serial chain (each word's multiply waits for the previous one), but making them — reading
    /// the columns, dispatching on each slot's tag, unpacking references — is not: with a second core, batches of
    /// objects are made into word lists by ``OrderedPipeline``'s workers, a few batches ahead, while the calling
    /// thread hashes them in order. The words are the same either way; on one core they are hashed as they are made.
    func combineDigest(
        ofEntity entityIndex: Int, model: ObjectModel, into hasher: inout DigestHasher,
        stoppingWhen isCancelled: () -> Bool = { false }
    ) {
        let objects = EntityDigestWords(state: self, entityIndex: entityIndex, model: model)
        let (count, batchSize) = (objects.count, Self.digestBatchSize(objectCount: objects.count))
        let batchCount = (count + batchSize - 1) / batchSize
        guard batchCount > 1, OrderedPipeline.workerCount > 1 else {
            for start in stride(from: 0, to: count, by: batchSize) {
                if isCancelled() { return }
                objects.combine(start..<min(count, start + batchSize), into: &hasher)
            }
            return
        }
        // Few batches ahead: a batch of an entity whose objects hold long lists (a tag's list of every post) is
        // megabytes of words.
        let window = 2 * OrderedPipeline.workerCount
        do {
            try OrderedPipeline.run(
                count: batchCount, window: window,
                make: { index in
                    let start = index * batchSize
                    var words = DigestWordList(reservingCapacity: objects.estimatedWordCount(batchSize))
                    objects.combine(start..<min(count, start + batchSize), into: &words)
                    return words
                },
                consume: { _, words throws(LogFormatError) in
                    if isCancelled() { throw LogFormatError(.closed, "the digest was cancelled") }
                    words.withWords { hasher.combine(words: $0) }
                })
        } catch {
            return  // cancelled: the only error thrown
        }
    }

    /// How many objects a batch of the digest holds: a sixteenth of the entity (so that an entity of a few objects
    /// with long lists still spreads over the workers), at most 1,024 (≈ 1 MB of words for a post of the demo).
    static func digestBatchSize(objectCount: Int) -> Int { min(1_024, max(1, objectCount / 16)) }

    /// Adds the attribute value in a slot of a column to `sink` exactly as `DigestWordSink.combine(_:)` adds the
    /// decoded ``AttributeValue``: fixed-width values from their bit pattern, binaries and ASCII text from the
    /// arena's bytes (the words a string's UTF-8 gives); other text (whose bytes decoding would repair if they were
    /// not UTF-8) and the rare values are decoded first.
    @inline(__always)
    static func combineDigest<Sink: DigestWordSink>(
        of column: UnsafePointer<Column>, tag: ValueTag, at slot: Int, into sink: inout Sink
    ) {
        if tag.isFixedWidth {
            sink.combine(fixedWidth: tag, column.pointee.words[slot])
            return
        }
        guard tag.isBytes else {
            sink.combine(Column.attributeValueUnlessRelationship(of: column, at: slot) ?? .null)
            return
        }
        // An arena whose every byte is ASCII (the usual one) answers for all its values: none is scanned again.
        let arenaIsASCII = column.pointee.arena.isASCII
        Column.withArenaBytes(of: column, at: slot) { bytes in
            if tag == .binary || tag == .transformable || arenaIsASCII || ByteArena.isASCII(bytes) {
                sink.combine(byteValue: tag, bytes)
            } else {
                sink.combine(AttributeValue(bytes: tag, bytes))
            }
        }
    }
}
