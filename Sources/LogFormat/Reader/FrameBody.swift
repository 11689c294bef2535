/// The checks of a frame's stored body, shared by every reader of frames: the scan, the re-read of a fragmented
/// transaction, and ``LogReader/readFrame(at:)``.
enum FrameBody {
    /// Verifies a stored body and the zero padding after it (`padded` holds both, as on disk) against `header`,
    /// and returns the payload: decompressed, exactly ``FrameHeader/rawByteCount`` bytes long.
    ///
    /// - Parameter dictionary: the file's dictionary in force, for ``FrameCodec/lz4Dictionary`` bodies.
    /// Verifies a stored body's checksum and the zero padding after it (`padded` holds both, as on disk), without
    /// decompressing it; nil when both are right.
    static func checkStored(_ padded: UnsafeRawBufferPointer, header: FrameHeader, seed: UInt32)
        -> LogScanner.Rejection?
    {
        let bodyCount = Int(header.bodyByteCount)
        precondition(padded.count == Int(header.frameByteCount) - FrameHeader.byteCount, "body and padding expected")
        let body = UnsafeRawBufferPointer(rebasing: padded[0..<bodyCount])
        guard CRC32C.checksum(body, continuing: seed) == header.bodyChecksum else {
            return LogScanner.Rejection(reason: "frame body checksum mismatch")
        }
        for index in bodyCount..<padded.count where padded[index] != 0 {
            return LogScanner.Rejection(reason: "nonzero padding after the frame body")
        }
        return nil
    }

    static func payload(
        of padded: UnsafeRawBufferPointer, header: FrameHeader, seed: UInt32, dictionary: [UInt8]?
    ) -> Result<[UInt8], LogScanner.Rejection> {
        if let rejection = checkStored(padded, header: header, seed: seed) { return .failure(rejection) }
        let body = UnsafeRawBufferPointer(rebasing: padded[0..<Int(header.bodyByteCount)])
        if header.codec == .raw { return .success(Array(body)) }
        if let rejection = checkDictionary(header: header, dictionary: dictionary) { return .failure(rejection) }
        return decompress(body, header: header, dictionary: dictionary)
    }

    /// Verifies a stored body as ``payload(of:header:seed:dictionary:)`` does and writes its payload into
    /// `destination`, which must be exactly ``FrameHeader/rawByteCount`` bytes long (a fragment decompressed in
    /// place into its whole payload, ``FragmentedPayload/assembled(maxByteCount:)``); nil when it verified.
    static func payload(
        of padded: UnsafeRawBufferPointer, header: FrameHeader, seed: UInt32, dictionary: [UInt8]?,
        into destination: UnsafeMutableRawBufferPointer
    ) -> LogScanner.Rejection? {
        precondition(destination.count == Int(header.rawByteCount), "a destination of the frame's raw length expected")
        if let rejection = checkStored(padded, header: header, seed: seed) { return rejection }
        let body = UnsafeRawBufferPointer(rebasing: padded[0..<Int(header.bodyByteCount)])
        if header.codec == .raw {
            // A raw body is its payload: its length is the raw length (the header decoder checks both agree).
            guard body.count == destination.count else {
                return LogScanner.Rejection(
                    reason: "raw frame body of \(body.count) bytes, recorded as \(destination.count)")
            }
            destination.copyMemory(from: body)
            return nil
        }
        if let rejection = checkDictionary(header: header, dictionary: dictionary) { return rejection }
        guard
            LZ4.decompress(
                body, into: destination, dictionary: header.codec == .lz4Dictionary ? dictionary : nil)
        else { return undecompressed }
        return nil
    }

    /// The rejection of a dictionary-compressed body when no dictionary came before it; nil otherwise.
    static func checkDictionary(header: FrameHeader, dictionary: [UInt8]?) -> LogScanner.Rejection? {
        guard header.codec == .lz4Dictionary && dictionary == nil else { return nil }
        return LogScanner.Rejection(reason: "dictionary-compressed frame without a dictionary before it")
    }

    /// Decompresses a verified LZ4 body (``checkStored(_:header:seed:)``, ``checkDictionary(header:dictionary:)``)
    /// to exactly the recorded raw length.
    static func decompress(_ body: UnsafeRawBufferPointer, header: FrameHeader, dictionary: [UInt8]?)
        -> Result<[UInt8], LogScanner.Rejection>
    {
        // The output is allocated at the recorded raw length, which the header decoder bounded by
        // `LogLimits.maxFrameRawByteCount`: a forged length costs at most one frame's worth.
        guard
            let raw = LZ4.decompress(
                body, rawByteCount: Int(header.rawByteCount),
                dictionary: header.codec == .lz4Dictionary ? dictionary : nil)
        else { return .failure(undecompressed) }
        return .success(raw)
    }

    /// The rejection of an LZ4 body that does not decompress.
    private static let undecompressed = LogScanner.Rejection(
        reason: "LZ4 block does not decompress to its recorded length")
}
