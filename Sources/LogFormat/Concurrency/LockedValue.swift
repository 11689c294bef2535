/// A value that is reachable only while its lock is held: the lock box for every piece of state that several
/// threads share in LogFormat and EventGraph.
///
/// The lock is scoped to a closure, so it cannot be left held, and nothing in the closure may wait for another
/// thread (no `await`, no durability wait): see the Concurrency article of EventGraph's documentation for which
/// lock guards what and the order in which they are taken. State that a thread must *wait on* lives in a
/// ``ConditionLock`` instead. Built on ``PthreadMutex`` (see there why not `Synchronization.Mutex`).
package final class LockedValue<Value> {
    private let mutex = PthreadMutex()
    /// Stable storage outside the object's own fields, so that the value is never subject to the class's dynamic
    /// exclusivity tracking (which the sanitizer reports as a race when it precedes the lock; swiftlang/swift#72487).
    private let storage: UnsafeMutablePointer<Value>

    /// Creates a lock box holding `value`.
    package init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with the lock held and the value lent to it.
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&storage.pointee)
    }
}

// @unchecked Sendable: the value is only reached through `withLock`, between pthread_mutex_lock and _unlock, which
// orders every access across threads; the storage and the mutex never move and are freed only in deinit, when no
// thread can hold a reference. `Value: Sendable`, so what is put in or taken out may cross threads.
extension LockedValue: @unchecked Sendable where Value: Sendable {}
