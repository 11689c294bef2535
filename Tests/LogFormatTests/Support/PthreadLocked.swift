import Foundation

/// A value behind an `NSLock` (pthread-based, so the thread sanitizer sees its happens-before edges; the futex-based
/// `Synchronization.Mutex` is invisible to it on Linux and makes it report races that are not there).
final class PthreadLocked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched between lock() and unlock() in `withLock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
