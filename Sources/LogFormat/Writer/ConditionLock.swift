#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutex with a condition variable, holding a value only reachable while locked.
///
/// `Synchronization.Mutex` has no condition variable, and group commit needs followers to sleep until the
/// leader's `fdatasync` covers their frames. The pthread objects live at stable heap addresses (never moved).
final class ConditionLock<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written between pthread_mutex_lock and _unlock (in `withLock`
    // and, via the closure, `wait`), which orders every access.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the lock held. `body` may call ``Locked/wait()`` and ``Locked/unlocked(_:)``.
    func withLock<R, E: Error>(_ body: (inout Locked) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var locked = Locked(owner: self)
        return try body(&locked)
    }

    /// Wakes every waiter.
    func broadcast() { pthread_cond_broadcast(condition) }

    /// Access to the value while the lock is held.
    struct Locked: ~Copyable {
        let owner: ConditionLock

        var value: Value {
            _read { yield owner.value }
            nonmutating _modify { yield &owner.value }
        }

        /// Releases the lock until another thread broadcasts, then takes it again.
        func wait() { pthread_cond_wait(owner.condition, owner.mutex) }

        /// Releases the lock while `body` runs (slow I/O), then takes it again.
        func unlocked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
            pthread_mutex_unlock(owner.mutex)
            defer { pthread_mutex_lock(owner.mutex) }
            return try body()
        }
    }
}
