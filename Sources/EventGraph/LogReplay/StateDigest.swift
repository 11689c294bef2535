import LogFormat

/// A digest of an object graph's state: a hash over a canonical encoding of every live object, its attribute
/// values and its relationships.
///
/// Canonical means independent of how the state came about: each object is hashed on its own (its entity, key, and
/// properties in name order; a property an object does not record counts as its default; an unordered to-many
/// relationship hashes the same whatever the order of its targets; references name stores by UUID and entities by
/// name), and the object hashes are added up, so the order objects are visited in does not matter. Two logs with the
/// same live state — for example a log and its compacted rewrite — have the same digest.
///
/// This is the digest's second definition: the first hashed every object into one chain in (entity name, key)
/// order, which only one thread could compute, in that order. The same state has a different digest under each
/// definition: a digest printed by an older `egctl` is not comparable with one printed now.
public struct StateDigest: Hashable, Sendable, CustomStringConvertible {
    /// The 128-bit value.
    public var value: UInt128

    /// Wraps a 128-bit value.
    public init(value: UInt128) { self.value = value }

    /// Reads the 16 bytes written by ``bytes``; nil for other lengths.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        value = bytes.reduce(0) { $0 << 8 | UInt128($1) }
    }

    /// 32 lowercase hex digits.
    public var description: String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 32 - hex.count) + hex
    }

    /// The 16 bytes, most significant first.
    public var bytes: [UInt8] { (0..<16).map { UInt8(truncatingIfNeeded: value >> (120 - 8 * $0)) } }

    /// The definition of the digest this library computes (see the type's discussion).
    package static let definition: UInt8 = 2

    /// What a checkpoint-end frame records (`Docs/FileFormat-Payloads.md`, CheckpointEnd): the definition's number,
    /// then the 16 ``bytes``. Files written before the second definition hold the 16 bytes alone.
    package var checkpointBytes: [UInt8] { [Self.definition] + bytes }
}

/// The state digest being computed: the sum, modulo 2^128, of every live object's hash, and the number of objects
/// added. Objects are added in any order, by any number of threads each with its own sum (``add(_:)`` joins them):
/// addition commutes. ``digest`` mixes the sum with the count and the definition's number.
///
/// An object's hash is its ``DigestHasher`` chain (see `EntityDigestWords`) passed through ``mix(_:)``, so that
/// every bit of each term depends on every word of its object: the chain's low bits alone depend only on the words'
/// low bits, which a plain sum of chains would keep.
struct DigestSum: Sendable, Equatable {
    private(set) var total: UInt128 = 0
    private(set) var objectCount: UInt64 = 0

    /// Adds one object, whose words `object` has hashed.
    @inline(__always)
    mutating func add(object: DigestHasher) {
        total &+= Self.mix(object.state)
        objectCount &+= 1
    }

    /// Adds the objects another sum holds.
    mutating func add(_ other: DigestSum) {
        total &+= other.total
        objectCount &+= other.objectCount
    }

    /// The digest of the objects added.
    var digest: StateDigest {
        var hasher = DigestHasher()
        hasher.combine(integer: UInt64(StateDigest.definition))
        hasher.combine(integer: objectCount)
        hasher.combine(integer: UInt64(truncatingIfNeeded: total))
        hasher.combine(integer: UInt64(truncatingIfNeeded: total >> 64))
        return StateDigest(value: Self.mix(hasher.state))
    }

    /// A bijective mix of 128 bits (xor-shifts and multiplies by odd constants, in the manner of MurmurHash3's
    /// finalizer): each output bit depends on every input bit.
    @inline(__always)
    static func mix(_ value: UInt128) -> UInt128 {
        var x = value
        x ^= x >> 64
        x &*= 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835
        x ^= x >> 67
        x &*= 0xC2B2_AE3D_27D4_EB4F_1656_67B1_9E37_79F9
        x ^= x >> 64
        return x
    }
}

/// Incremental FNV-1a with a 128-bit state over the canonical encoding of one object (``DigestSum`` adds the
/// objects up), taking 64-bit little-endian words (bytes of strings and binaries are packed eight to a word, the
/// last word zero-padded, after their length): one 128-bit multiply per word instead of per byte.
struct DigestHasher: Sendable {
    /// The FNV prime 2^88 + 2^8 + 0x3B, written as one literal: from an expression (`(1 << 88) + …`), which the
    /// compiler does not fold for `UInt128`, the constant was initialized lazily and each word was multiplied by it
    /// as by an unknown 128-bit number (three multiplies); with the literal, a multiply by `0x13B` and a shift.
    private static let prime: UInt128 = 0x0100_0000_0000_0000_0000_013B
    private(set) var state: UInt128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D

    @inline(__always)
    mutating func combine(integer: UInt64) {
        state ^= UInt128(integer)
        state &*= Self.prime
    }

    /// Calls `body` with the words ``combine(raw:)`` adds for `raw`: its length, then its bytes eight to a word
    /// (little-endian), the last word zero-padded.
    @inline(__always)
    static func forEachWord(of raw: UnsafeRawBufferPointer, _ body: (UInt64) -> Void) {
        body(UInt64(raw.count))
        var offset = 0
        while offset + 8 <= raw.count {
            body(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset += 8
        }
        if offset < raw.count {
            var word: UInt64 = 0
            for (shift, index) in (offset..<raw.count).enumerated() { word |= UInt64(raw[index]) << (8 * shift) }
            body(word)
        }
    }

    /// The words ``combine(string:)`` adds for `string`, for a name hashed once per object or per reference (a
    /// property's, an entity's): ``combine(words:)`` of them is ``combine(string:)`` without reading the string.
    static func words(of string: String) -> [UInt64] {
        var words: [UInt64] = []
        var string = string
        string.withUTF8 { utf8 in forEachWord(of: UnsafeRawBufferPointer(utf8)) { words.append($0) } }
        return words
    }

}

/// The canonical encoding's values as words (see ``DigestHasher``).
extension DigestHasher {
    mutating func combine(byte: UInt8) { combine(integer: UInt64(byte)) }

    @inline(__always)
    mutating func combine(raw: UnsafeRawBufferPointer) {
        DigestHasher.forEachWord(of: raw) { word in combine(integer: word) }
    }

    /// Combines words computed by ``DigestHasher/words(of:)``.
    @inline(__always)
    mutating func combine(words: UnsafeBufferPointer<UInt64>) {
        for word in words { combine(integer: word) }
    }

    mutating func combine(bytes: [UInt8]) { bytes.withUnsafeBytes { combine(raw: $0) } }

    mutating func combine(string: String) {
        var string = string
        string.withUTF8 { combine(raw: UnsafeRawBufferPointer($0)) }
    }

    /// Combines a byte value from its tag and bytes as ``combine(_:)`` combines the value they decode to.
    @inline(__always)
    mutating func combine(byteValue tag: ValueTag, _ bytes: UnsafeRawBufferPointer) {
        switch tag {
        case .string: combine(byte: 7)
        case .url: combine(byte: 10)
        case .decimal: combine(byte: 11)
        case .binary: combine(byte: 12)
        case .transformable: combine(byte: 14)
        default: preconditionFailure("tag \(tag) is not a byte value")
        }
        combine(raw: bytes)
    }

    /// Combines the fixed-width value of a tag and bit pattern (a column's storage; `AttributeValue(fixedWidth:_:)`)
    /// without building the value: its type's byte (1 int16, 2 int32, 3 int64, 4 double, 5 float, 6 bool, 8 date),
    /// then its integer (sign-extended), bit pattern or boolean byte. ``combine(_:)`` combines a fixed-width value
    /// through it; the digest called three functions per value before (the value's initializer, ``combine(_:)``,
    /// its release).
    @inline(__always)
    mutating func combine(fixedWidth tag: ValueTag, _ word: UInt64) {
        switch tag {
        case .int16:
            combine(byte: 1)
            combine(integer: UInt64(bitPattern: Int64(Int16(truncatingIfNeeded: Int64(bitPattern: word)))))
        case .int32:
            combine(byte: 2)
            combine(integer: UInt64(bitPattern: Int64(Int32(truncatingIfNeeded: Int64(bitPattern: word)))))
        case .int64: combine(byte: 3); combine(integer: word)
        case .double: combine(byte: 4); combine(integer: Double(bitPattern: word).bitPattern)
        case .float:
            combine(byte: 5)
            combine(integer: UInt64(Float(bitPattern: UInt32(truncatingIfNeeded: word)).bitPattern))
        case .bool: combine(byte: 6); combine(byte: word != 0 ? 1 : 0)
        case .date: combine(byte: 8); combine(integer: Double(bitPattern: word).bitPattern)
        default: preconditionFailure("tag \(tag) is not fixed-width")
        }
    }

    mutating func combine(_ value: AttributeValue) {
        switch value {
        case .null: combine(byte: 0)
        case .int16, .int32, .int64, .double, .float, .bool, .date:
            let (tag, word) = value.fixedWidthEncoding!
            combine(fixedWidth: tag, word)
        case .string(let v): combine(byte: 7); combine(string: v)
        case .uuid(let v): combine(byte: 9); combine(integer: v.high); combine(integer: v.low)
        case .url(let v): combine(byte: 10); combine(string: v)
        case .decimal(let v): combine(byte: 11); combine(string: v)
        case .binary(let v): combine(byte: 12); combine(bytes: v)
        case .blob(let r):
            // The blob's identity and length stand for its bytes (reading every blob would make digests slow);
            // blob frames are checksummed on their own.
            combine(byte: 13); combine(integer: r.transactionID); combine(integer: UInt64(r.index))
            combine(integer: r.byteCount)
        case .transformable(let v): combine(byte: 14); combine(bytes: v)
        }
    }
}
