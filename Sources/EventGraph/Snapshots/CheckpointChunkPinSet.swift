/// The checkpoint chunks a save (or a child's push) reads committed values from, each pinned once
/// (``LazyColumnChunk/pin()``) until ``unpin()``: loaded before the save changes anything, so that a chunk that
/// cannot be read fails the save with its error there — a value read later (validation, building the operations,
/// comparing what a child read with its parent's view) cannot throw, and would end the process.
///
/// The bound: one pin per distinct checkpoint chunk that holds an object the save changes or deletes (a checkpoint
/// chunk holds up to ``ColumnChunk/slotCapacity`` objects), for as long as the save runs. These are the chunks a
/// root save of the same changes copies and keeps in memory anyway (a commit makes every chunk it changes resident),
/// so the pins hold no chunk the save would not; the budget of decoded chunks is exceeded by at most them, never by
/// chunks the save does not touch.
struct CheckpointChunkPinSet {
    private(set) var boxes: [LazyColumnChunk] = []
    /// The pinned boxes, for the test of membership once there are more than a few.
    private var pinned: Set<ObjectIdentifier> = []

    /// Pins the checkpoint chunk that `values` read through, unless they read none or it is pinned already.
    ///
    /// - Throws: the chunk's error when it cannot be loaded (it is not pinned then; those pinned before stay
    ///   pinned until ``unpin()``).
    @inline(__always)
    mutating func pin(_ values: CommittedValues?) throws(EventGraphError) {
        guard let box = values?.checkpointChunk, boxes.last !== box else { return }
        try pin(box)
    }

    private mutating func pin(_ box: LazyColumnChunk) throws(EventGraphError) {
        guard pinned.insert(ObjectIdentifier(box)).inserted else { return }
        do {
            try box.pin()
        } catch {
            pinned.remove(ObjectIdentifier(box))
            throw error
        }
        boxes.append(box)
    }

    /// Lets the cache evict the pinned chunks again (each box's last pin carries out an eviction it deferred).
    func unpin() {
        for box in boxes { box.unpin() }
    }
}
