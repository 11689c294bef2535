/// SplitMix64: a small, fast, seedable generator for sample data, so that a seed gives the same data on every
/// platform and run (the system generator promises neither).
///
/// `egctl demo` and the benchmarks' workload draw from it; the tests have their own copy in `TestSupport`,
/// which builds no EventGraph code.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose values are determined by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<count` (0 when `count` is 0); the modulo bias is negligible for the small counts of
    /// sample data.
    public mutating func below(_ count: Int) -> Int {
        precondition(count >= 0, "a sample count cannot be negative (\(count))")
        return count == 0 ? 0 : Int(next() % UInt64(count))
    }
}
