import Foundation

/// The store's commit lock: a pthread mutex around the ``CommitQueue``.
///
/// Not `Synchronization.Mutex`: on Linux that lock hands ownership over through a priority-inheritance futex, a
/// transfer the thread sanitizer cannot see, so every contended save (group commit makes contention the normal
/// case) was reported as a race. A pthread mutex is intercepted by the sanitizer, and saves hold this lock only
/// for validation and enqueueing, so its cost does not matter.
final class CommitLock<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written between pthread_mutex_lock and _unlock in `withLock`;
    // the mutex lives at a stable heap address and is destroyed in deinit, when no thread can hold it.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        precondition(pthread_mutex_lock(mutex) == 0, "pthread_mutex_lock failed")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
