#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pthread mutex at a stable heap address: the one lock primitive under ``LockedValue`` and ``ConditionLock``.
///
/// Not `Synchronization.Mutex`: on Linux that lock hands ownership from one thread to the next through a
/// priority-inheritance futex, inside the kernel, where the thread sanitizer cannot see it, so every contended
/// critical section is reported as a race (four threads appending to a `Mutex<[Int]>` are reported by Swift 6.3.1's
/// sanitizer; the same loop under this lock is not). pthread calls are intercepted by the sanitizer, which then
/// checks the code under the locks instead of burying it in false reports. A condition variable also needs a
/// pthread mutex.
///
/// The mutex checks its owner (`PTHREAD_MUTEX_ERRORCHECK`): taking a lock twice on one thread, a programmer error
/// that would otherwise hang the process silently, stops it with a message instead.
struct PthreadMutex: ~Copyable {
    let pointer: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        precondition(pthread_mutexattr_init(&attributes) == 0, "pthread_mutexattr_init failed")
        defer { pthread_mutexattr_destroy(&attributes) }
        precondition(
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK)) == 0,
            "pthread_mutexattr_settype failed")
        precondition(pthread_mutex_init(pointer, &attributes) == 0, "pthread_mutex_init failed")
    }

    deinit {
        // Nobody can hold the lock any more: its owner is being destroyed.
        pthread_mutex_destroy(pointer)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    func lock() {
        let result = pthread_mutex_lock(pointer)
        precondition(result == 0, "a lock was taken twice by one thread, or is broken (error \(result))")
    }

    func unlock() {
        let result = pthread_mutex_unlock(pointer)
        precondition(result == 0, "a lock was released by a thread that does not hold it (error \(result))")
    }
}
