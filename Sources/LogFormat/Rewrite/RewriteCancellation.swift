import Synchronization

/// Stops a rewrite at its next check: between its stages, between checkpoint chunks, between frames of
/// its verification and between rounds of its tail copy, and once more just before the rename. A rewrite that
/// stops removes its temporary file and throws ``LogFormatError/Code/closed``; the log stays the old file, untouched
/// and still the writer's (a rewrite writes only its own temporary file until the rename, and once the rename is
/// done nothing is cancelled any more).
///
/// A store cancels its running compaction when it closes, so that closing never waits out a whole checkpoint.
package final class RewriteCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A flag not yet raised.
    package init() {}

    /// Raises the flag: every rewrite given this object stops at its next check. It cannot be lowered again.
    package func cancel() {
        flag.store(true, ordering: .releasing)
    }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { flag.load(ordering: .acquiring) }

    /// Throws ``LogFormatError/Code/closed`` when the flag is raised; `stage` says where the rewrite stopped.
    package func check(path: String, stage: String) throws(LogFormatError) {
        guard isCancelled else { return }
        throw LogFormatError(
            .closed, "the rewrite was cancelled \(stage) (its store is closing); the log was not rewritten", path: path)
    }
}
