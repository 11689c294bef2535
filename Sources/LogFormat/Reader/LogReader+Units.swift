#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One committed unit of a log as its frames hold it: the payload after decompression, not decoded.
///
/// What a rewrite is verified by: the writer of a new log describes every unit it appends this way, and a scan of
/// the finished file (``LogReader/scanUnits(_:)``) must deliver the same units in the same order — a check of every
/// frame's checksum, framing and decompression that costs one pass over the bytes, without decoding or replaying.
package struct LogUnit: Sendable {
    /// What the unit is.
    package enum Kind: UInt8, Sendable {
        case schema = 1
        case transaction = 2
        case transactionBlob = 3
        case checkpointBegin = 4
        case checkpointChunk = 5
        case checkpointBlob = 6
        case checkpointEnd = 7
        case dictionary = 8
        case seal = 9
        case extensionFrame = 10
        case checkpointDirectory = 11
    }

    package var kind: Kind
    /// The transaction of a transaction or blob; 0 for other units.
    package var transactionID: UInt64
    /// A blob's index in its transaction, an extension frame's type; 0 otherwise.
    package var index: UInt32
    /// The payload (empty for blobs, whose frames are checksummed but not read again here, and seals).
    package var payload: [UInt8]
    /// A blob's length in bytes; the payload's length otherwise.
    package var byteCount: Int

    /// A unit with a payload.
    package init(_ kind: Kind, transactionID: UInt64 = 0, index: UInt32 = 0, payload: [UInt8]) {
        self.kind = kind
        self.transactionID = transactionID
        self.index = index
        self.payload = payload
        self.byteCount = payload.count
    }

    /// A blob, by identity and length.
    package init(blob kind: Kind, transactionID: UInt64, index: UInt32, byteCount: Int) {
        self.kind = kind
        self.transactionID = transactionID
        self.index = index
        self.payload = []
        self.byteCount = byteCount
    }
}

extension LogReader {
    /// Scans the whole log, verifying every frame, and calls `body` with each committed unit in order, undecoded: a
    /// transaction's blobs (by identity and length), then the transaction.
    ///
    /// - Throws: ``LogFormatError`` for I/O errors or unsupported features (damage is reported in the result, not
    ///   thrown), or whatever `body` throws.
    @discardableResult
    package func scanUnits(_ body: (LogUnit) throws(LogFormatError) -> Void) throws(LogFormatError) -> ScanReport {
        let scanFile = try LogFile(path: path, flags: O_RDONLY, faults: nil)
        let size = try scanFile.size()
        var scanner = LogScanner(window: FileWindow(file: scanFile, limit: size), header: header)
        let result = try scanner.scan { event throws(LogFormatError) in
            switch event {
            case .schema(let payload, _):
                try body(LogUnit(.schema, payload: payload))
            case .transaction(let id, let payload, let blobs, _):
                for blob in blobs { try body(Self.unit(.transactionBlob, blob)) }
                try body(LogUnit(.transaction, transactionID: id, payload: try payload.bytes()))
            case .checkpointBegin(let payload, _):
                try body(LogUnit(.checkpointBegin, payload: payload))
            case .checkpointChunk(let payload, _):
                try body(LogUnit(.checkpointChunk, payload: try payload.bytes()))
            case .checkpointBlob(let blob):
                try body(Self.unit(.checkpointBlob, blob))
            case .checkpointDirectory(let directory, _):
                try body(LogUnit(.checkpointDirectory, payload: try directory.encoded()))
            case .checkpointEnd(let payload, _):
                try body(LogUnit(.checkpointEnd, payload: payload))
            case .dictionary(let payload, _):
                try body(LogUnit(.dictionary, payload: payload))
            case .seal:
                try body(LogUnit(.seal, payload: []))
            case .extensionFrame(let type, let payload, _):
                try body(LogUnit(.extensionFrame, index: UInt32(type.rawValue), payload: payload))
            }
        }
        return ScanReport(result, fileByteCount: size, headerCopyDamaged: headerCopyDamaged)
    }

    private static func unit(_ kind: LogUnit.Kind, _ blob: BlobLocation) -> LogUnit {
        LogUnit(blob: kind, transactionID: blob.transactionID, index: blob.index, byteCount: Int(blob.byteCount))
    }
}
