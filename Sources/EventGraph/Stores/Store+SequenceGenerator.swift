import LogFormat

// Named counters (seed 003's IDGenerator): `nextValue(of:)` hands out 1, 2, 3, … per name and never the same value
// twice, also across crashes and concurrent callers. Each value is recorded in the log — a transaction without
// operations whose changeset carries the counter's new last value (payload version 2, `Docs/FileFormat-Payloads.md`)
// — and synced before it is handed out, whatever the store's durability mode; checkpoints carry every counter, so
// a compaction keeps them. A value handed out is never taken back: a save that fails or is never made leaves a gap.

extension StoreState {
    /// Raises the counters to the reservations' values (a replayed changeset or checkpoint).
    mutating func advanceSequences(_ reservations: [SequenceReservation]) {
        for reservation in reservations {
            sequences[reservation.name] = max(sequences[reservation.name] ?? 0, reservation.lastValue)
        }
    }

    /// Every counter, by name, for a checkpoint.
    var sequenceReservations: [SequenceReservation] {
        sequences.sorted { $0.key < $1.key }.map { SequenceReservation(name: $0.key, lastValue: $0.value) }
    }
}

extension Store {
    /// The author recorded on a counter's transactions.
    static let sequenceAuthor = "eventgraph.sequence"
    /// The longest counter name, in bytes of UTF-8.
    static let maxSequenceNameByteCount = 256

    /// The next value of the counter `name`: its last value plus one (the first is 1), durable before it returns.
    func nextValue(of name: String) throws(EventGraphError) -> Int64 {
        guard !name.isEmpty, name.utf8.count <= Self.maxSequenceNameByteCount else {
            throw EventGraphError(
                .invalidArgument,
                "a sequence's name must be 1 to \(Self.maxSequenceNameByteCount) bytes of UTF-8, not "
                    + "\(name.utf8.count) ('\(name.prefix(40))')")
        }
        // One reservation at a time: two callers must not both read the same last value.
        return try sequenceLock.withLock { (_: inout Void) throws(EventGraphError) -> Int64 in
            let last = state.withLock { $0.sequences[name] ?? 0 }
            guard last < UInt64(Int64.max) else {
                throw EventGraphError(
                    .invalidArgument, "the sequence '\(name)' has handed out every value up to \(Int64.max)")
            }
            let value = last + 1
            var request = CommitRequest(author: Self.sequenceAuthor, operations: [], readRows: [:], mergePolicy: .error)
            request.sequenceReservations = [SequenceReservation(name: name, lastValue: value)]
            _ = try commit(request)
            // The commit is as durable as the store's mode; the value must be synced even in `.none` and `.normal`,
            // or a crash could hand it out again.
            try backend.sync()
            state.withLock { $0.advanceSequences(request.sequenceReservations) }
            return Int64(value)
        }
    }
}

extension StoreCoordinator {
    /// The next value of a counter kept in the store of `configuration` (the first store's when `nil`).
    func nextValue(of name: String, configuration: String?) throws(EventGraphError) -> Int64 {
        guard let configuration else { return try stores[0].nextValue(of: name) }
        guard let store = store(ofConfiguration: configuration) else {
            let isKnown = model.configurationNames.contains(configuration)
            throw EventGraphError(
                isKnown ? .storeNotMounted : .invalidArgument,
                isKnown
                    ? "the sequence '\(name)' is kept in the store of the configuration '\(configuration)', which is "
                        + "not mounted"
                    : "the model '\(model.name)' has no configuration '\(configuration)' to keep the sequence '\(name)'"
            )
        }
        return try store.nextValue(of: name)
    }
}
