import LogFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Filters evaluated on the columns: a chunk at a time, each comparison producing a bitmap of the slots that pass.
///
/// A comparison of integers compares the bit patterns in the typed array, one of floating-point values or dates
/// compares `Double`s, and a substring, prefix or suffix test on a string searches the arena's bytes (`memchr`,
/// `memcmp`).
/// Those fast paths decide only where they agree exactly with ``ResolvedFilter/matches(_:)``; every other slot is
/// decided by that function on the slot's value, so the result never depends on the representation.
extension EntityColumns {
    /// The slots of the live objects whose values pass `filter`, in commit order.
    ///
    /// - Throws: the error of a checkpoint chunk that cannot be loaded (``loadedChunk(at:)``): without it, its
    ///   objects would silently not match.
    func slots(matching filter: ResolvedFilter) throws(EventGraphError) -> [Int] {
        var slots: [Int] = []
        for chunkIndex in 0..<chunkCount {
            let chunk = try loadedChunk(at: chunkIndex)
            let bits = Self.evaluate(filter.root, in: chunk)
            let base = chunkIndex * ColumnChunk.slotCapacity
            for (wordIndex, word) in bits.enumerated() where word != 0 {
                var remaining = word
                while remaining != 0 {
                    slots.append(base + wordIndex * 64 + remaining.trailingZeroBitCount)
                    remaining &= remaining - 1
                }
            }
        }
        return slots
    }

    private static func evaluate(_ node: ResolvedFilter.Node, in chunk: ColumnChunk) -> [UInt64] {
        switch node {
        case .constant(let result):
            return result ? chunk.liveBits : Array(repeating: 0, count: chunk.liveBits.count)
        case .and(let nodes):
            var bits = chunk.liveBits
            for node in nodes where bits.contains(where: { $0 != 0 }) {
                let other = evaluate(node, in: chunk)
                for index in bits.indices { bits[index] &= other[index] }
            }
            return bits
        case .or(let nodes):
            var bits = Array(repeating: UInt64(0), count: chunk.liveBits.count)
            for node in nodes {
                let other = evaluate(node, in: chunk)
                for index in bits.indices { bits[index] |= other[index] }
            }
            return bits
        case .not(let node):
            let other = evaluate(node, in: chunk)
            return chunk.liveBits.indices.map { chunk.liveBits[$0] & ~other[$0] }
        case .compare(let property, let comparison, let operand):
            return compare(property, comparison, operand, in: chunk)
        }
    }

    /// The live slots whose value of `property` passes one comparison.
    private static func compare(
        _ property: Int, _ comparison: FetchFilter.Comparison, _ operand: AttributeValue, in chunk: ColumnChunk
    ) -> [UInt64] {
        let exact = ResolvedFilter(root: .compare(property, comparison, operand))
        guard property < chunk.columns.count else {
            // No live row has the property: each reads as null.
            let passes = exact.matches { _ in .null }
            return passes ? chunk.liveBits : Array(repeating: 0, count: chunk.liveBits.count)
        }
        let column = chunk.columns[property]
        let text = TextPattern(comparison, operand, arena: column.arena)
        var bits = Array(repeating: UInt64(0), count: chunk.liveBits.count)
        for (wordIndex, word) in chunk.liveBits.enumerated() where word != 0 {
            var remaining = word
            while remaining != 0 {
                let position = wordIndex * 64 + remaining.trailingZeroBitCount
                remaining &= remaining - 1
                let tag = column.tag(at: position)
                let decided: Bool?
                switch tag {
                case .int16, .int32, .int64:
                    decided = compareInteger(Int64(bitPattern: column.words[position]), comparison, operand)
                case .double, .date:
                    decided = compareDouble(Double(bitPattern: column.words[position]), comparison, operand)
                case .string: decided = text?.matches(at: position, in: column.arena)
                default: decided = nil
                }
                let passes = decided ?? exact.matches { _ in column.attributeValue(at: position) }
                if passes { bits[wordIndex] |= 1 << UInt64(position & 63) }
            }
        }
        return bits
    }

    /// An integer column value against an integer operand, as ``AttributeValue/compare(to:)`` orders them;
    /// `nil` for any other operand.
    @inline(__always)
    private static func compareInteger(_ value: Int64, _ comparison: FetchFilter.Comparison, _ operand: AttributeValue)
        -> Bool?
    {
        let other: Int64
        switch operand {
        case .int16(let v): other = Int64(v)
        case .int32(let v): other = Int64(v)
        case .int64(let v): other = v
        default: return nil
        }
        switch comparison {
        case .equal: return value == other
        case .notEqual: return value != other
        case .less: return value < other
        case .lessOrEqual: return value <= other
        case .greater: return value > other
        case .greaterOrEqual: return value >= other
        case .contains, .beginsWith, .endsWith: return false
        }
    }

    /// A `Double` or date column value against a `Double` or date operand, with `Double`'s operators as
    /// ``AttributeValue/compare(to:)`` applies them (NaN orders after everything and equals nothing); `nil` for any
    /// other operand.
    @inline(__always)
    private static func compareDouble(_ value: Double, _ comparison: FetchFilter.Comparison, _ operand: AttributeValue)
        -> Bool?
    {
        let other: Double
        switch operand {
        case .double(let v), .date(let v): other = v
        default: return nil
        }
        switch comparison {
        case .equal: return value == other
        case .notEqual: return !(value == other)
        case .less: return value < other
        case .lessOrEqual: return value < other || value == other
        case .greater: return !(value < other) && !(value == other)
        case .greaterOrEqual: return !(value < other)
        case .contains, .beginsWith, .endsWith: return false
        }
    }
}

/// A substring, prefix or suffix test that a byte search decides exactly: the pattern is non-empty ASCII without
/// CR or LF and the arena holds ASCII only. Then characters are bytes (the only multi-scalar ASCII character is
/// CR LF, which the pattern cannot split), so `String`'s character-wise test and the byte test agree.
private struct TextPattern {
    let comparison: FetchFilter.Comparison
    let pattern: [UInt8]

    init?(_ comparison: FetchFilter.Comparison, _ operand: AttributeValue, arena: ByteArena) {
        guard comparison == .contains || comparison == .beginsWith || comparison == .endsWith,
            case .string(let string) = operand
        else { return nil }
        let pattern = Array(string.utf8)
        guard !pattern.isEmpty, pattern.allSatisfy({ $0 < 0x80 && $0 != 0x0A && $0 != 0x0D }),
            arena.isASCII
        else { return nil }
        self.comparison = comparison
        self.pattern = pattern
    }

    func matches(at slot: Int, in arena: ByteArena) -> Bool {
        arena.withBytes(at: slot) { text in
            guard text.count >= pattern.count else { return false }
            return pattern.withUnsafeBytes { pattern in
                switch comparison {
                case .beginsWith:
                    return memcmp(text.baseAddress!, pattern.baseAddress!, pattern.count) == 0
                case .endsWith:
                    return memcmp(text.baseAddress! + (text.count - pattern.count), pattern.baseAddress!, pattern.count)
                        == 0
                default:
                    return Self.find(pattern, in: text)
                }
            }
        }
    }

    /// Whether `pattern` occurs in `text`: `memchr` to the next candidate first byte, then `memcmp` (glibc's
    /// `memmem` is not visible to Swift without `_GNU_SOURCE`).
    private static func find(_ pattern: UnsafeRawBufferPointer, in text: UnsafeRawBufferPointer) -> Bool {
        let first = Int32(pattern[0])
        var offset = 0
        let lastStart = text.count - pattern.count
        while offset <= lastStart {
            guard let hit = memchr(text.baseAddress! + offset, first, lastStart - offset + 1) else { return false }
            let start = text.baseAddress!.distance(to: UnsafeRawPointer(hit))
            if memcmp(text.baseAddress! + start, pattern.baseAddress!, pattern.count) == 0 { return true }
            offset = start + 1
        }
        return false
    }
}

extension EntityColumns {
    /// Calls `body` with every live slot in commit order (unloaded chunks are loaded).
    func forEachLiveSlot(_ body: (_ chunk: ColumnChunk, _ position: Int, _ slot: Int) throws -> Void) rethrows {
        for chunkIndex in resident.indices {
            let chunk = chunk(at: chunkIndex)
            let base = chunkIndex * ColumnChunk.slotCapacity
            for (wordIndex, word) in chunk.liveBits.enumerated() where word != 0 {
                var bits = word
                while bits != 0 {
                    let position = wordIndex * 64 + bits.trailingZeroBitCount
                    try body(chunk, position, base + position)
                    bits &= bits - 1
                }
            }
        }
    }

    /// The live rows in commit order, each built from the columns.
    var liveRows: [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(count)
        forEachLiveSlot { chunk, position, _ in rows.append(chunk.row(at: position, entityIndex: entityIndex)) }
        return rows
    }

    /// The live objects' values of one attribute, with their keys, in commit order (for building indexes without
    /// building rows).
    func forEachAttributeValue(property: Int, _ body: (_ key: UInt64, _ value: PropertyValue?) -> Void) {
        forEachLiveSlot { chunk, position, _ in
            let value = property < chunk.columns.count ? chunk.columns[property].value(at: position) : nil
            body(chunk.keys[position], value)
        }
    }
}
