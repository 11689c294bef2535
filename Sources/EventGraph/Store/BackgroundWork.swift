import Foundation
import LogFormat

/// Work a save hands to a thread of its own and waits for before it queues its changeset: a large save's payload,
/// encoded while the save is staged and its uniqueness checked (``Store/prepare(_:_:crossStore:)``). A bulk save of
/// 100,000 posts did these one after the other on one core (h83's profile: encoding ≈ 15 % of the save's CPU).
///
/// The work must only read values, never take a lock of the store or wait for the thread that handed it over: the
/// save waits for it under the commit lock (see the Concurrency article's rule 3). A thread of its own, not a
/// Dispatch queue: a pool whose threads all wait for the commit lock would never run it. Work that nobody waits for
/// (a save that fails before it is queued) runs to its end and is dropped.
///
/// What the work allocates and frees comes from its thread's malloc arena: work that builds long-lived values there
/// (an install's columns) left 100+ MB of freed memory in other arenas over three bulk saves (h83); encoding builds
/// the payload, one block large enough to be mapped and unmapped on its own, and compresses frame bodies into a block
/// mapped for them (`FrameBodyBlock`), unmapped once the log has queued them: as arrays of the encoding thread's
/// own, freed in its arena, they raised a bulk save's peak memory by 18–38 MB (h106).
final class BackgroundWork<Value: Sendable, Failure: Error>: Sendable {
    /// The fewest objects a save must write to hand work to a thread: below this, the work takes less than starting
    /// one.
    static var minimumObjectCount: Int { 1_024 }

    private let outcome = ConditionLock<Result<Value, Failure>?>(nil)

    /// Starts `work` on a new thread named `name`.
    init(_ name: String, _ work: @escaping @Sendable () throws(Failure) -> Value) {
        let thread = Thread { [outcome] in
            let result = Result { () throws(Failure) -> Value in try work() }
            outcome.withLock { $0.value = result }
            outcome.broadcast()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the work and returns its value, or throws its error.
    func value() throws(Failure) -> Value {
        // Taken out of the lock, so that the caller holds the value alone (a payload array is then not copied).
        let result = outcome.withLock { locked in
            locked.wait(until: { if case .some = $0 { true } else { false } })
            defer { locked.value = nil }
            return locked.value!
        }
        return try result.get()
    }
}
