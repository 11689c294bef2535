import Foundation
import TestSupport

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
