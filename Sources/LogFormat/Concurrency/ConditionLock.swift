#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A lock with a condition variable, holding a value only reachable while locked: for state that threads wait on.
///
/// A waiter sleeps until another thread changes the value and calls ``broadcast()``; it never polls. Group commit
/// uses it (followers sleep until the leader's `fdatasync` covers their frames), and so does the store's commit
/// lock (a compaction or close sleeps until the queued saves are installed). State nobody waits on belongs in a
/// ``LockedValue``. Built on ``PthreadMutex``, whose pthread objects live at stable heap addresses.
package final class ConditionLock<Value> {
    private let mutex = PthreadMutex()
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Outside the object's own fields for the same reason as ``LockedValue``'s.
    private let storage: UnsafeMutablePointer<Value>
    /// How many times a thread has begun waiting on the condition; only touched with the mutex held.
    private var waitsBegun = 0

    /// Creates a lock holding `value`.
    package init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with the lock held. `body` may wait (``Locked/wait(until:)``) and may release the lock for
    /// slow work (``Locked/unlocked(_:)``).
    package func withLock<R, E: Error>(_ body: (inout Locked) throws(E) -> R) throws(E) -> R {
        mutex.lock()
        defer { mutex.unlock() }
        var locked = Locked(owner: self)
        return try body(&locked)
    }

    /// Wakes every waiter, which then re-checks what it waits for. Call it after changing the value in a way a
    /// waiter may be waiting for, with or without the lock held.
    package func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Access to the value while the lock is held.
    package struct Locked: ~Copyable {
        let owner: ConditionLock

        /// The value; only reachable while the lock is held.
        package var value: Value {
            unsafeAddress { UnsafePointer(owner.storage) }
            nonmutating unsafeMutableAddress { owner.storage }
        }

        /// Releases the lock until another thread broadcasts, then takes it again. The value may have changed and
        /// wake-ups may be spurious: prefer ``wait(until:)``.
        package func wait() {
            owner.waitsBegun += 1
            let result = pthread_cond_wait(owner.condition, owner.mutex.pointer)
            precondition(result == 0, "pthread_cond_wait failed (error \(result))")
        }

        /// How many times a thread has begun waiting on this lock's condition (``wait()``), counted since the lock was
        /// made: a waiter that sleeps until signalled begins one wait per wake-up, one that polls begins none. For
        /// tests and diagnostics.
        package var waitsBegun: Int { owner.waitsBegun }

        /// Sleeps (the lock released) until `isSatisfied` holds for the value; returns with the lock held.
        package func wait(until isSatisfied: (Value) -> Bool) {
            while !isSatisfied(owner.storage.pointee) { wait() }
        }

        /// Releases the lock while `body` runs (slow I/O), then takes it again.
        package func unlocked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
            owner.mutex.unlock()
            defer { owner.mutex.lock() }
            return try body()
        }
    }
}

// @unchecked Sendable: the value is only reached between pthread_mutex_lock and _unlock (in `withLock`, and through
// `Locked`, which only exists inside it; `wait` and `unlocked` give the lock up and take it back before the value is
// touched again), which orders every access; the pthread objects and the storage never move and are freed only in
// deinit. `Value: Sendable`, so what is put in or taken out may cross threads.
extension ConditionLock: @unchecked Sendable where Value: Sendable {}
