/// The payload of a ``FrameType/checkpointIndexChunk`` frame (format 1.4): a sorted run of one index's entries, so
/// that a reader finds the holder of a value by reading the one chunk whose range holds it
/// (`Docs/FileFormat-Checkpoints.md` §7).
///
/// The entries are held flat: one array of keys and one of values, entry `i`'s values at
/// `i * arity ..< (i + 1) * arity` (a compaction builds a million-entry index without an array per entry).
///
/// LogFormat does not know the order of values (the object layer defines it); it checks the counts, the arity and
/// the limits. The object layer checks the order when it loads a chunk.
package struct CheckpointIndexChunk: Hashable, Sendable {
    /// How many values each entry has (1 for an attribute index, the constraint's attribute count for a
    /// uniqueness constraint): 1 ... ``LogLimits/maxIndexArity``.
    package var arity: Int
    /// The entries' keys in the index's order (values, then key).
    package var keys: [UInt64]
    /// The entries' values, ``arity`` per entry, in the order of ``keys``.
    package var values: [AttributeValue]

    /// Creates the payload from flat entries (``encoded()`` refuses values that are not `arity` per key).
    package init(arity: Int, keys: [UInt64], values: [AttributeValue]) {
        self.arity = arity
        self.keys = keys
        self.values = values
    }

    /// Creates the payload from entries (``encoded()`` refuses an entry whose value count is not `arity`).
    package init(arity: Int, entries: [CheckpointIndexEntry]) {
        self.arity = arity
        self.keys = entries.map(\.key)
        self.values = entries.flatMap(\.values)
        if let entry = entries.first(where: { $0.values.count != arity }) {
            misshapenEntry = "an index entry of key \(entry.key) has \(entry.values.count) values, not \(arity)"
        }
    }

    /// Why the entries it was made from do not fit its arity, for the encoder to refuse (flat values cannot show
    /// an entry of the wrong count when another makes up for it).
    var misshapenEntry: String?

    /// How many entries it holds.
    package var entryCount: Int { keys.count }

    /// The values of entry `index`.
    package func values(ofEntry index: Int) -> ArraySlice<AttributeValue> {
        values[index * arity..<(index + 1) * arity]
    }

    /// The entries one by one (an array of values each).
    package var entries: [CheckpointIndexEntry] {
        keys.indices.map { CheckpointIndexEntry(values: Array(values(ofEntry: $0)), key: keys[$0]) }
    }
}

/// One entry of a stored index: the indexed values of an object and its key.
package struct CheckpointIndexEntry: Hashable, Sendable {
    /// The object's values of the indexed attributes (``CheckpointIndexChunk/arity`` of them).
    package var values: [AttributeValue]
    /// The object's key in its store.
    package var key: UInt64

    /// Creates an entry.
    package init(values: [AttributeValue], key: UInt64) {
        self.values = values
        self.key = key
    }
}
