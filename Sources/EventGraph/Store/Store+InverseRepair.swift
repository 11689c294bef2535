import LogFormat

extension Store {
    /// Appends the operations that keep both sides of every relationship the changeset touches in agreement with
    /// the committed state (see ``InverseRepair``).
    func repairInverses(
        _ operations: inout [ChangeOperation], pinned: Set<InverseRepair.Slot>, _ queue: CommitQueue
    ) {
        guard hasInverses else { return }
        // A save of new objects whose both sides agree needs nothing, and is proven so without the edge table.
        if pinned.isEmpty && InverseRepair.isConsistentInsertion(operations, model: model) { return }
        let repairs = state.withLock { state in
            var repair = InverseRepair(model: model, state: state, queue: queue)
            return repair.repairs(for: operations, pinned: pinned)
        }
        operations += repairs
    }
}
