import LogFormat

/// The rule by which the box of a checkpoint chunk — an entity chunk (``LazyColumnChunk``) or an index chunk
/// (``LazyIndexChunk``) — reads it, one implementation for both: a read that fails with an I/O error (`pread` failed,
/// ``EventGraphError/isFailedRead``) may succeed when tried again, so it is tried again, up to ``retryCount`` more
/// times, and its error is not kept (the next touch reads again); damage (bytes that fail their checks) will not
/// heal, so the box keeps it and every later touch throws it without reading.
enum CheckpointChunkRead {
    /// How many more times a read that failed with an I/O error is tried before the error is given to the caller.
    static let retryCount = 3

    /// Runs `read` until it succeeds, fails with damage, or has failed with an I/O error ``retryCount`` + 1 times;
    /// `eachTry` runs before every try (a box counts its reads).
    @inline(__always)
    static func retryingFailedReads<Value>(
        eachTry: () -> Void, _ read: () throws(EventGraphError) -> Value
    ) -> Result<Value, EventGraphError> {
        var retries = 0
        while true {
            eachTry()
            let result = Result(catching: read)
            guard case .failure(let error) = result, error.isFailedRead, retries < retryCount else { return result }
            retries += 1
        }
    }

    /// Keeps `error` in a box's `failure` when it is damage; a read that failed is not kept.
    @inline(__always)
    static func keep(_ error: EventGraphError, in failure: inout EventGraphError?) {
        if !error.isFailedRead { failure = error }
    }
}
