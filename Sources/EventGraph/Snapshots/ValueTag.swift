import LogFormat

/// What one slot of a column holds: the kind of its value, which also says which of the column's storages has it.
///
/// A column is not declared with a type: a slot's tag says how to read it, so values that do not match the model's
/// declared type (a tolerant replay, a schema frame that changed a type) are kept exactly as the log has them.
enum ValueTag: UInt8, Sendable {
    /// The slot is empty, or its row has fewer properties than the column's index.
    case absent = 0
    case null
    // Fixed-width values: their bit pattern is in ``Column/words``.
    case int16, int32, int64, double, float, bool, date
    // Byte values: in the column's ``ByteArena``.
    case string, url, decimal, binary, transformable
    // Rare values, kept whole in ``Column/others``.
    case uuid, blob
    // Relationships.
    case toOneNil, toOne, toMany

    /// Whether the value is in ``Column/words``.
    var isFixedWidth: Bool { (ValueTag.int16.rawValue...ValueTag.date.rawValue).contains(rawValue) }

    /// Whether the value is in the column's byte arena.
    var isBytes: Bool { (ValueTag.string.rawValue...ValueTag.transformable.rawValue).contains(rawValue) }
}

extension AttributeValue {
    /// The tag and bit pattern of a fixed-width value; `nil` for the others.
    var fixedWidthEncoding: (ValueTag, UInt64)? {
        switch self {
        case .int16(let v): (.int16, UInt64(bitPattern: Int64(v)))
        case .int32(let v): (.int32, UInt64(bitPattern: Int64(v)))
        case .int64(let v): (.int64, UInt64(bitPattern: v))
        case .double(let v): (.double, v.bitPattern)
        case .float(let v): (.float, UInt64(v.bitPattern))
        case .bool(let v): (.bool, v ? 1 : 0)
        case .date(let v): (.date, v.bitPattern)
        default: nil
        }
    }

    /// The value of a fixed-width tag and bit pattern.
    init(fixedWidth tag: ValueTag, _ word: UInt64) {
        switch tag {
        case .int16: self = .int16(Int16(truncatingIfNeeded: Int64(bitPattern: word)))
        case .int32: self = .int32(Int32(truncatingIfNeeded: Int64(bitPattern: word)))
        case .int64: self = .int64(Int64(bitPattern: word))
        case .double: self = .double(Double(bitPattern: word))
        case .float: self = .float(Float(bitPattern: UInt32(truncatingIfNeeded: word)))
        case .bool: self = .bool(word != 0)
        case .date: self = .date(Double(bitPattern: word))
        default: preconditionFailure("tag \(tag) is not fixed-width")
        }
    }

    /// How many bytes a byte value takes in an arena (0 for the others).
    var arenaByteCount: Int {
        switch self {
        case .string(let s), .url(let s), .decimal(let s): s.utf8.count
        case .binary(let b), .transformable(let b): b.count
        default: 0
        }
    }

    /// The tag of a byte value, with a call that lends its bytes; `nil` for the others.
    func withBytesEncoding<R>(_ body: (ValueTag, UnsafeRawBufferPointer) -> R) -> R? {
        func text(_ tag: ValueTag, _ string: String) -> R {
            var string = string
            return string.withUTF8 { body(tag, UnsafeRawBufferPointer($0)) }
        }
        switch self {
        case .string(let s): return text(.string, s)
        case .url(let s): return text(.url, s)
        case .decimal(let s): return text(.decimal, s)
        case .binary(let b): return b.withUnsafeBytes { body(.binary, $0) }
        case .transformable(let b): return b.withUnsafeBytes { body(.transformable, $0) }
        default: return nil
        }
    }

    /// The value of a byte tag and its bytes.
    ///
    /// - Parameter isKnownASCII: whether every byte of `bytes` is known to be below 0x80 (its arena's
    ///   ``ByteArena/isASCII``): text is then copied without being validated (see ``text(_:isKnownASCII:)``).
    init(bytes tag: ValueTag, _ bytes: UnsafeRawBufferPointer, isKnownASCII: Bool = false) {
        switch tag {
        case .string: self = .string(Self.text(bytes, isKnownASCII: isKnownASCII))
        case .url: self = .url(Self.text(bytes, isKnownASCII: isKnownASCII))
        case .decimal: self = .decimal(Self.text(bytes, isKnownASCII: isKnownASCII))
        case .binary: self = .binary(Array(bytes))
        case .transformable: self = .transformable(Array(bytes))
        default: preconditionFailure("tag \(tag) is not a byte value")
        }
    }

    /// A `String` of UTF-8 bytes, ill-formed sequences repaired; bytes known to be ASCII are copied without being
    /// validated.
    ///
    /// `String(decoding:as:)` checks every byte of its input (`_allASCII`, a tenth of a fetch that reads every post in
    /// h85's profile) even when the arena it comes from is known to be ASCII. ASCII bytes are well-formed UTF-8 one
    /// byte per scalar, so `String(copying:)` of a `UTF8Span` made `unchecked` with `isKnownASCII` copies them as
    /// they are, and marks the string ASCII as the check would have. The flag is computed from the bytes themselves
    /// whenever an arena is written (``ByteArena/set(_:at:isASCII:)``), never read from a file.
    @inline(__always)
    static func text(_ bytes: UnsafeRawBufferPointer, isKnownASCII: Bool) -> String {
        if isKnownASCII, #available(macOS 26, iOS 26, watchOS 26, tvOS 26, visionOS 26, *) {
            let span = bytes.assumingMemoryBound(to: UInt8.self).span
            return String(copying: UTF8Span(unchecked: span, isKnownASCII: true))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
