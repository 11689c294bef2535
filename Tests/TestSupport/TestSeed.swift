import Foundation

/// The seed of a randomized test: `EG_TEST_SEED` when set (to replay a failure), otherwise a fresh one.
///
/// The seed is always printed, so a failing run names the value that reproduces it.
public enum TestSeed {
    /// Picks the seed for `test` and prints it with the command that replays it.
    public static func make(for test: String = #function) -> UInt64 {
        let seed: UInt64
        if let text = ProcessInfo.processInfo.environment["EG_TEST_SEED"], let value = UInt64(text) {
            seed = value
        } else {
            seed = UInt64.random(in: 1...UInt64.max)
        }
        print("\(test): seed \(seed) (replay with EG_TEST_SEED=\(seed))")
        return seed
    }
}
