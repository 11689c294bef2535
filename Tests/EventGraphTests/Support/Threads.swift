import Dispatch
import Foundation
import LogFormat

/// Runs `body(thread)` on `count` threads at once (real threads, so they run together even on a machine with fewer
/// cores) and waits for all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

/// A one-time meeting point: each of `count` threads waits in ``arriveAndWait()`` until all have arrived, so that
/// what they do next (for example a save) races.
final class ThreadBarrier: Sendable {
    private let count: Int
    /// A LockedValue (pthread), which the thread sanitizer sees, unlike `Synchronization.Mutex` on Linux.
    private let arrived = LockedValue(0)
    private let gate = DispatchSemaphore(value: 0)

    init(count: Int) {
        self.count = count
    }

    func arriveAndWait() {
        let isLast = arrived.withLock { arrived in
            arrived += 1
            return arrived == count
        }
        if isLast {
            for _ in 1..<count { gate.signal() }
        } else {
            gate.wait()
        }
    }
}
