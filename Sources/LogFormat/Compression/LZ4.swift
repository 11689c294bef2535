// The only file that imports liblz4. Every call checks its result; pointers stay inside the closures.
import CLZ4

/// LZ4 block compression (the block API, with LogFormat's own framing around it).
enum LZ4 {
    /// Compresses `source` into a single LZ4 block, or returns `nil` when the result would not be smaller.
    static func compress(_ source: UnsafeRawBufferPointer, dictionary: [UInt8]? = nil) -> [UInt8]? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        let capacity = Int(LZ4_compressBound(Int32(source.count)))
        // Not zeroed first (the output of a 1 MiB fragment is a fresh megabyte: zeroing it was 3 % of a bulk insert's
        // CPU): only the bytes the compressor wrote are kept.
        var written: Int32 = 0
        let output = [UInt8](uninitializedCount: capacity) { destination, initialized in
            let src = source.baseAddress!.assumingMemoryBound(to: CChar.self)
            let dst = UnsafeMutableRawPointer(destination.baseAddress!).assumingMemoryBound(to: CChar.self)
            if let dictionary, !dictionary.isEmpty {
                guard let stream = LZ4_createStream() else { return }
                defer { LZ4_freeStream(stream) }
                written = dictionary.withUnsafeBytes { dict in
                    _ = LZ4_loadDict(stream, dict.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(dict.count))
                    return LZ4_compress_fast_continue(stream, src, dst, Int32(source.count), Int32(capacity), 1)
                }
            } else {
                written = LZ4_compress_default(src, dst, Int32(source.count), Int32(capacity))
            }
            initialized = written > 0 && Int(written) <= capacity ? Int(written) : 0
        }
        guard written > 0, Int(written) < source.count else { return nil }
        return output
    }

    /// Compresses `source` into a single LZ4 block (no dictionary) in `output`, whose storage is reused when it is
    /// large enough (a rewrite's chunks, whose arrays go back to a ``ByteArrayPool``); returns `false` when the block
    /// would not be smaller (`output` then holds garbage).
    static func compress(_ source: UnsafeRawBufferPointer, into output: inout [UInt8]) -> Bool {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE) else { return false }
        let capacity = Int(LZ4_compressBound(Int32(source.count)))
        let src = source.baseAddress!.assumingMemoryBound(to: CChar.self)
        guard output.capacity >= capacity else {
            // Too small to reuse: a new array, not zeroed (as `compress(_:dictionary:)` makes it), with an eighth
            // more room, so that the next chunks, alike but a little larger, fit it too.
            var written: Int32 = 0
            output = [UInt8](uninitializedCount: capacity + capacity / 8) { destination, initialized in
                let dst = UnsafeMutableRawPointer(destination.baseAddress!).assumingMemoryBound(to: CChar.self)
                written = LZ4_compress_default(src, dst, Int32(source.count), Int32(capacity))
                initialized = written > 0 && Int(written) <= capacity ? Int(written) : 0
            }
            return written > 0 && Int(written) < source.count
        }
        // The bytes a reused array holds are overwritten; only room past them is filled first (zeros).
        if output.count < capacity { output.append(contentsOf: repeatElement(0, count: capacity - output.count)) }
        guard let written = output.withUnsafeMutableBytes({ compress(source, into: $0) }) else { return false }
        output.removeLast(output.count - written)
        return true
    }

    /// The most bytes ``compress(_:into:)-(_,UnsafeMutableRawBufferPointer)`` writes for a source of `byteCount`
    /// bytes (`LZ4_compressBound`), and never fewer than `byteCount` (room for the source kept raw).
    static func bound(_ byteCount: Int) -> Int {
        guard byteCount > 0, byteCount <= Int(LZ4_MAX_INPUT_SIZE) else { return max(byteCount, 0) }
        return max(byteCount, Int(LZ4_compressBound(Int32(byteCount))))
    }

    /// Compresses `source` into a single LZ4 block (no dictionary) at the start of `destination` (a frame's room in
    /// a ``FrameBodyBlock``), which must have ``bound(_:)`` bytes; returns the block's length, or `nil` when it
    /// would not be smaller (`destination` then holds garbage).
    static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE), destination.count >= bound(source.count)
        else { return nil }
        let written = LZ4_compress_default(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(source.count),
            Int32(clamping: destination.count))
        guard written > 0, Int(written) < source.count else { return nil }
        return Int(written)
    }

    /// Decompresses one LZ4 block that must expand to exactly `rawByteCount` bytes.
    ///
    /// Returns `nil` when the block is malformed or does not expand to exactly that length; uses
    /// `LZ4_decompress_safe` only, so a corrupt block can never write outside the output.
    static func decompress(
        _ source: UnsafeRawBufferPointer, rawByteCount: Int, dictionary: [UInt8]? = nil
    ) -> [UInt8]? {
        guard rawByteCount > 0 else { return nil }
        // Not zeroed first (a checkpoint chunk is megabytes): only the bytes the decoder wrote are kept, and the
        // result is used only when it wrote all of them.
        var decompressed = false
        let output = [UInt8](uninitializedCount: rawByteCount) { destination, initializedCount in
            decompressed = decompress(source, into: UnsafeMutableRawBufferPointer(destination), dictionary: dictionary)
            initializedCount = decompressed ? rawByteCount : 0
        }
        return decompressed ? output : nil
    }

    /// Decompresses one LZ4 block into `destination`, which it must fill exactly (a fragment decompressed in
    /// place into its whole payload).
    ///
    /// Returns `false` when the block is malformed or does not expand to exactly `destination.count` bytes
    /// (`destination` may then hold anything); never writes outside `destination`.
    static func decompress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, dictionary: [UInt8]? = nil
    ) -> Bool {
        let rawByteCount = destination.count
        guard rawByteCount > 0, rawByteCount <= Int(Int32.max), source.count > 0, source.count <= Int(Int32.max)
        else { return false }
        let src = source.baseAddress!.assumingMemoryBound(to: CChar.self)
        let dst = destination.baseAddress!.assumingMemoryBound(to: CChar.self)
        let produced: Int32
        if let dictionary, !dictionary.isEmpty {
            produced = dictionary.withUnsafeBytes { dict in
                LZ4_decompress_safe_usingDict(
                    src, dst, Int32(source.count), Int32(rawByteCount),
                    dict.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(dict.count))
            }
        } else {
            produced = LZ4_decompress_safe(src, dst, Int32(source.count), Int32(rawByteCount))
        }
        return produced == Int32(rawByteCount)
    }
}
