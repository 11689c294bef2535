import Foundation
import LogFormat

/// The saves across stores that a store's log records since its checkpoint, as a compaction must know them
/// (`Docs/FileFormat.md` §3.6): a compaction drops those records, after which the store can no longer tell another
/// participant whether it holds its part. So before it compacts, every other participant of those saves must have
/// decided its own part: one whose log still ends with it gets an empty transaction after it (as an opener of the
/// stores does). Only a container that has those stores mounted can do that; a store alone, or one whose
/// participant is not mounted, refuses to compact.
final class CrossStoreParts: Sendable {
    /// Another store of the container, held weakly: the stores hold this object, and it must not keep them open.
    final class Participant: Sendable {
        weak let store: Store?
        init(_ store: Store) { self.store = store }
    }

    private struct State {
        /// Per other participant, the last save this store shared with it since the log's checkpoint (from the
        /// replay at open, then from each save across stores).
        var lastShared: [LogUUID: CrossStoreTransaction] = [:]
        /// The other stores of the container, by UUID; empty for a store alone.
        var participants: [LogUUID: Participant] = [:]
        /// Whether the replay's saves were taken (once: a compaction makes them stale).
        var isSeeded = false
    }

    private let state = LockedValue(State())

    /// Takes what the replay at open found (the first time only), for the store `storeUUID`; later saves noted
    /// already are newer.
    private static func seed(_ state: inout State, from ledger: CrossStoreLedger, storeUUID: LogUUID) {
        guard !state.isSeeded else { return }
        state.isSeeded = true
        for (uuid, record) in ledger.lastShared where uuid != storeUUID && state.lastShared[uuid] == nil {
            state.lastShared[uuid] = record
        }
    }

    /// Takes the other stores of a container (called once the container's stores are open and decided).
    func connect(_ stores: [Store], ledger: CrossStoreLedger, storeUUID: LogUUID) {
        state.withLock { state in
            Self.seed(&state, from: ledger, storeUUID: storeUUID)
            for store in stores where store.storeUUID.logUUID != storeUUID {
                state.participants[store.storeUUID.logUUID] = Participant(store)
            }
        }
    }

    /// Notes a save across stores this store took part in.
    func note(_ record: CrossStoreTransaction, storeUUID: LogUUID) {
        state.withLock { state in
            for participant in record.participants where participant.storeUUID != storeUUID {
                state.lastShared[participant.storeUUID] = record
            }
        }
    }

    /// Makes every other participant of the saves this store's log records decide its part, before a compaction
    /// drops the records; returns the saves it checked (``forget(_:)`` them once the compaction is done).
    ///
    /// - Throws: ``EventGraphError/Code/storeMismatch`` when a participant is not a mounted store of the container
    ///   (or the store is alone): the compaction must not run.
    func confirmParticipants(of store: String, ledger: CrossStoreLedger, storeUUID: LogUUID)
        throws(EventGraphError) -> [LogUUID: CrossStoreTransaction]
    {
        let (shared, participants) = state.withLock { state in
            Self.seed(&state, from: ledger, storeUUID: storeUUID)
            return (state.lastShared, state.participants)
        }
        for (uuid, record) in shared.sorted(by: { $0.key < $1.key }) {
            guard let store = participants[uuid]?.store else {
                throw EventGraphError(
                    .storeMismatch,
                    "\(store) was not compacted: its log records save \(record.id) across stores with store "
                        + "\(UUID(logUUID: uuid)), which is not open with it, and a compaction would drop the record "
                        + "that store may need to decide its part (FileFormat.md §3.6); compact it in a container "
                        + "that has that store mounted")
            }
            let part = record.participants.first { $0.storeUUID == uuid }!.transactionID
            // Its log ends with its part (nothing after it): record the decision there first.
            if store.lastTransactionID == part { try CrossStoreRecovery.confirm(store) }
        }
        return shared
    }

    /// Whether a save across stores came after ``confirmParticipants(of:ledger:storeUUID:)`` returned
    /// `confirmed`, up to the transaction a compaction's checkpoint holds: its other participants were not confirmed.
    func hasUnconfirmed(_ confirmed: [LogUUID: CrossStoreTransaction]) -> Bool {
        // A save that another compaction forgot meanwhile is no longer recorded: only new ones count.
        state.withLock { $0.lastShared.contains { confirmed[$0.key] != $0.value } }
    }

    /// The error for a live-state migration of a log that records saves across stores since its checkpoint: it
    /// would drop those records as a compaction does, with no container to let the other participants decide first.
    static func liveStateMigrationError(path: String) -> EventGraphError {
        EventGraphError(
            .storeMismatch,
            "\(path) cannot be migrated keeping only its live state: its log records saves across stores, which the "
                + "other stores may need to decide their parts (FileFormat.md §3.6); migrate it keeping history, or "
                + "compact it first in a container that has its other stores mounted")
    }

    /// Forgets the saves a compaction dropped (those confirmed, unless a newer one replaced them meanwhile).
    func forget(_ confirmed: [LogUUID: CrossStoreTransaction]) {
        state.withLock { state in
            for (uuid, record) in confirmed where state.lastShared[uuid] == record { state.lastShared[uuid] = nil }
        }
    }
}
