import Foundation
import LogFormat
import Synchronization

/// The state digest of a compaction's snapshot, computed on a thread of its own while the checkpoint's chunks are
/// built and written: only the checkpoint-end frame, which carries it, waits for it (``value()``). Before h48 the
/// rewrite began only once the digest was done, so the two longest stages of a compaction ran one after the other.
///
/// The snapshot is an immutable version of the state, so the digest reads it with no lock. ``cancel()`` (a failed
/// or cancelled compaction) stops the hashing before its next chunk of objects, so no digest outlives its
/// compaction for long.
final class BackgroundDigest: Sendable {
    private enum Outcome: Sendable {
        case running
        case done(StateDigest)
        case cancelled
    }

    private let outcome = ConditionLock<Outcome>(.running)
    private let isAbandoned = Atomic<Bool>(false)

    /// Starts hashing `snapshot`; `cancellation` (the store's close) stops it as ``cancel()`` does.
    init(of snapshot: StoreState, model: ObjectModel, cancellation: RewriteCancellation) {
        let thread = Thread { [self] in
            let digest = snapshot.digest(model: model) {
                isAbandoned.load(ordering: .relaxed) || cancellation.isCancelled
            }
            outcome.withLock { $0.value = digest.map(Outcome.done) ?? .cancelled }
            outcome.broadcast()
        }
        thread.name = "EventGraph checkpoint digest"
        thread.start()
    }

    /// Stops the hashing at its next chunk; ``value()`` then throws unless it had finished.
    func cancel() {
        isAbandoned.store(true, ordering: .relaxed)
    }

    /// Waits for the digest; throws ``EventGraphError/Code/closed`` when it was cancelled first.
    func value() throws(EventGraphError) -> StateDigest {
        let result = outcome.withLock { locked -> Outcome in
            locked.wait(until: {
                if case .running = $0 { false } else { true }
            })
            return locked.value
        }
        guard case .done(let digest) = result else {
            throw EventGraphError(.closed, "the compaction was cancelled before its state digest was computed")
        }
        return digest
    }
}
