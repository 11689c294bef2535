/// Named limits on every size in the format, checked when writing and when reading.
///
/// A corrupt length can therefore never cause a huge allocation or a decompression bomb: anything larger
/// than these is rejected with ``LogFormatError/Code/limitExceeded`` (on write) or reported as damage (on read).
package enum LogLimits {
    /// The largest body (stored bytes after compression) of one frame: 16 MiB.
    package static let maxFrameBodyByteCount = 16 << 20
    /// The largest decompressed payload of one frame: 16 MiB. This also bounds one externally stored binary value
    /// (a blob is one frame); transactions are split into fragments of ``LogWriter/Options/fragmentByteCount``.
    package static let maxFrameRawByteCount = 16 << 20
    /// The largest transaction (sum of its fragments' payloads): 1 GiB.
    package static let maxTransactionByteCount = 1 << 30
    /// The largest single string in a payload (entity, attribute or author names, string values): 64 MiB.
    package static let maxStringByteCount = 64 << 20
    /// The largest inline binary value in a payload: 256 MiB (larger ones must be stored as blobs).
    package static let maxBinaryByteCount = 256 << 20
    /// The largest number of elements in any list in a payload (operations, values, references): 16 Mi.
    package static let maxElementCount = 16 << 20
    /// The largest number of entities in a schema.
    package static let maxEntityCount = 65_536
    /// The largest number of properties (attributes and relationships) of one entity.
    package static let maxPropertyCount = 65_536
    /// The most objects in one checkpoint entity chunk (format 1.3): the object layer's chunk of slots.
    package static let maxEntityChunkObjectCount = 4096
    /// The most entries in one checkpoint index chunk (format 1.4).
    package static let maxIndexChunkEntryCount = 4096
    /// The most values in one index entry (the attributes of one uniqueness constraint).
    package static let maxIndexArity = 16
    /// The largest dictionary used for LZ4 compression: 64 KiB (LZ4 uses at most 64 KiB of history).
    package static let maxDictionaryByteCount = 64 << 10
}
