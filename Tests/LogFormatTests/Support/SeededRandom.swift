import Foundation

/// A small, fast, reproducible random number generator (SplitMix64) for seeded tests.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
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
enum TestSeed {
    static func make(for test: String = #function) -> UInt64 {
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

/// Payload bytes for log tests.
enum TestBytes {
    /// Bytes LZ4 cannot shrink.
    static func random(_ count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Deterministic incompressible-looking bytes (a cheap hash of the index), for tests without a seed.
    static func noise(_ count: Int, salt: UInt64 = 0) -> [UInt8] {
        var generator = SeededGenerator(seed: salt &+ 0x5EED)
        return random(count, using: &generator)
    }

    /// Bytes LZ4 compresses well: a short text repeated.
    static func text(_ count: Int) -> [UInt8] {
        let sentence = Array("the quick brown fox jumps over the lazy dog; ".utf8)
        return (0..<count).map { sentence[$0 % sentence.count] }
    }
}
