/// The body of one checkpoint chunk frame (an entity chunk or an index chunk) as its file stores it, read and verified
/// (``LogReader/storedCheckpointFrame(at:type:what:checkpointTransactionID:)``), so that a rewrite copies it into the
/// new checkpoint without decompressing, decoding or encoding it again: only its header is new (sequence,
/// transaction, the new file's checksums).
struct StoredCheckpointFrame: Sendable {
    let type: FrameType
    let codec: FrameCodec
    /// The length of the payload the body decompresses to.
    let rawByteCount: UInt32
    /// The body as stored: what the new frame carries.
    let body: [UInt8]

    /// The frame body for a new file: the same stored bytes, checksummed with that file's seed, in a frame of the
    /// new checkpoint (`transactionID`).
    func encodedBody(seed: UInt32, transactionID: UInt64) -> EncodedBody {
        EncodedBody(
            type: type, codec: codec, transactionID: transactionID, partIndex: 0, rawByteCount: rawByteCount,
            body: body, bodyChecksum: CRC32C.checksum(body, continuing: seed))
    }
}
