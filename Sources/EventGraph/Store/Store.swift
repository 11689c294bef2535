import Foundation
import LogFormat
import Synchronization

/// The shared state of one store: the model, the log backend, and the committed snapshot of every object.
///
/// Contexts read rows under a short lock; saves are serialized by a commit lock held across validation against
/// the committed state, the append and the installation of the new rows, so the snapshot always equals the
/// replay of the log. Nothing awaits while a lock is held.
final class Store: Sendable {
    let model: ObjectModel
    let storeUUID: UUID
    let backend: any LogBackend
    let isReadOnly: Bool
    let state: Mutex<StoreState>
    /// Serializes commits, compaction and close.
    let commitLock = Mutex<Bool>(false)
    private let keyCounter: Atomic<UInt64>

    init(model: ObjectModel, backend: any LogBackend, state: StoreState, isReadOnly: Bool) {
        self.model = model
        self.backend = backend
        self.storeUUID = UUID(logUUID: backend.storeUUID)
        self.isReadOnly = isReadOnly
        self.keyCounter = Atomic(state.nextKey)
        self.state = Mutex(state)
    }

    /// The committed row of an object.
    func row(entityIndex: Int, key: UInt64) -> Row? {
        state.withLock { $0.row(entityIndex: entityIndex, key: key) }
    }

    /// The committed row of an object whose entity is unknown (for example from an ``ObjectID`` of a sub-entity).
    func row(forKey key: UInt64, in entityIndices: [Int]) -> Row? {
        state.withLock { state in
            for index in entityIndices { if let row = state.row(entityIndex: index, key: key) { return row } }
            return nil
        }
    }

    /// Snapshots of the row arrays of some entities, for scanning without holding the lock.
    func rowSnapshots(of entityIndices: [Int]) -> [[Row?]] {
        state.withLock { state in entityIndices.map { state.tables[$0].rows } }
    }

    /// The holder of a unique value tuple.
    func holder(of tuple: UniqueKey) -> UInt64? {
        state.withLock { $0.uniqueIndex[tuple] }
    }

    /// Allocates a key; keys are never reused, even when the object is never saved.
    func reserveKey() -> UInt64 {
        keyCounter.add(1, ordering: .relaxed).oldValue
    }

    /// The counter's value: every key below it has been handed out.
    var keyWatermark: UInt64 { keyCounter.load(ordering: .relaxed) }

    var lastTransactionID: UInt64 { state.withLock { $0.lastTransactionID } }

    /// Reads an externally stored value.
    func readBlob(_ reference: BlobReference) throws(EventGraphError) -> [UInt8] {
        let key = BlobKey(transactionID: reference.transactionID, index: reference.index)
        guard let handle = state.withLock({ $0.blobHandles[key] }) else {
            throw EventGraphError(
                .log, "no external value \(reference.index) of transaction \(reference.transactionID) in the log")
        }
        return try backend.readBlob(at: handle)
    }

    /// Closes the backend; later commits fail.
    func close() throws(EventGraphError) {
        try commitLock.withLock { closed throws(EventGraphError) in
            guard !closed else { return }
            closed = true
            try backend.close()
        }
    }

    static func nowMicroseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }
}
