/// The payload of a ``FrameType/checkpointIndexChunk`` frame (format 1.4): a sorted run of one index's entries, so
/// that a reader finds the holder of a value by reading the one chunk whose range holds it
/// (`Docs/FileFormat-Checkpoints.md` §7).
///
/// LogFormat does not know the order of values (the object layer defines it); it checks the counts, the arity and
/// the limits. The object layer checks the order when it loads a chunk.
package struct CheckpointIndexChunk: Hashable, Sendable {
    /// How many values each entry has (1 for an attribute index, the constraint's attribute count for a
    /// uniqueness constraint): 1 ... ``LogLimits/maxIndexArity``.
    package var arity: Int
    /// The entries in the index's order (values, then key).
    package var entries: [CheckpointIndexEntry]

    /// Creates the payload.
    package init(arity: Int, entries: [CheckpointIndexEntry]) {
        self.arity = arity
        self.entries = entries
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
