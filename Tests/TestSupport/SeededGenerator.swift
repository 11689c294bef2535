import Foundation

/// A small, fast, reproducible random number generator (SplitMix64) for seeded tests and harnesses.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seed of a randomized test: `EG_TEST_SEED` when set (to replay a failure), otherwise a fresh one.
///
/// The seed is always printed, so a failing run names the value that reproduces it.
public enum TestSeed {
    /// Returns the seed for `test` and prints it with the command line that replays it.
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
