/// The frames of one transaction's payload, compressed and checksummed ahead of
/// ``LogWriter/enqueueTransaction(id:payload:blobs:encodedPayload:)`` by every thread that helps: the thread that
/// made the payload starts on its frames as soon as it hands it over (``supply(_:)``), and the thread that will
/// queue the transaction takes the frames left once it is free (``encodedFrames()``), instead of compressing every
/// frame itself under the caller's lock (a bulk save of 100,000 posts: ≈ 55 frames of 1 MiB, ≈ 11 % of its time).
///
/// Each frame is encoded as ``OutgoingFrame/encodeBody(seed:dictionary:)`` would encode it, with the seed given here,
/// whichever thread takes it, and the bodies are returned in the frames' order: the bytes queued are those
/// ``LogWriter/enqueueTransaction(id:payload:blobs:)`` would have made. A frame is taken and handed back under the
/// lock; it is encoded with the lock released, so two threads encode two frames at once, each into its frame's room
/// of one ``FrameBodyBlock`` (no arena of the encoding thread keeps the bodies once the log has queued them).
package final class SharedFrameEncoding: Sendable {
    /// The transaction whose payload it encodes.
    package let transactionID: UInt64
    /// The checksum seed of the log file the bodies are made for (``LogWriter/frameSeed``); a writer whose file was
    /// rewritten since encodes the frames again with the new one.
    package let seed: UInt32
    private let fragmentByteCount: Int

    private struct Progress: Sendable {
        /// Whether the payload was handed over (or its making failed).
        var isSupplied = false
        /// Whether nobody will wait for the frames (``abandon()``): no frame is taken any more.
        var isAbandoned = false
        var failure: LogFormatError?
        var frames: [OutgoingFrame] = []
        /// The block the frames' bodies are written into (made with the frames).
        var block: FrameBodyBlock?
        var payloadByteCount = 0
        /// The first frame no thread has taken.
        var next = 0
        /// Each frame's body once a thread encoded it.
        var bodies: [EncodedBody?] = []
        var encodedCount = 0
    }

    private let progress = ConditionLock(Progress())

    /// Prepares to encode the payload of transaction `transactionID` for a log whose checksum seed is `seed`, in
    /// fragments of `fragmentByteCount` bytes (the writer's ``LogWriter/Options/fragmentByteCount``).
    package init(transactionID: UInt64, seed: UInt32, fragmentByteCount: Int) {
        self.transactionID = transactionID
        self.seed = seed
        self.fragmentByteCount = fragmentByteCount
    }

    /// Hands over the payload (once): its frames may be taken from now on.
    package func supply(_ payload: [UInt8]) {
        let frames = OutgoingFrame.transactionFrames(
            id: transactionID, payload: payload, fragmentByteCount: fragmentByteCount)
        // Mapped, not yet touched: its pages are taken as the bodies are written (a few per frame are not).
        let block = FrameBodyBlock(rooms: frames)
        progress.withLock { locked in
            precondition(!locked.value.isSupplied, "a payload is supplied once")
            locked.value.isSupplied = true
            guard !locked.value.isAbandoned else { return }
            locked.value.frames = frames
            locked.value.block = block
            locked.value.payloadByteCount = payload.count
            locked.value.bodies = Array(repeating: nil, count: frames.count)
        }
        progress.broadcast()
    }

    /// Says the payload will not come: its making failed with `error`, which ``encodedFrames()`` then throws.
    package func fail(_ error: LogFormatError) {
        progress.withLock { locked in
            precondition(!locked.value.isSupplied, "a payload is supplied once")
            locked.value.isSupplied = true
            locked.value.failure = error
        }
        progress.broadcast()
    }

    /// Says nobody will wait for the frames (the save that wanted them failed, or encodes another payload): the
    /// frames not taken yet are not encoded.
    package func abandon() {
        progress.withLock { locked in
            locked.value.isAbandoned = true
            locked.value.frames = []
            locked.value.block = nil
        }
    }

    /// How many frames have been encoded so far (for tests).
    var encodedFrameCount: Int { progress.withLock { $0.value.encodedCount } }

    /// Encodes frames no thread has taken, until none is left (at once, before the payload is supplied).
    package func help() {
        while let (index, frame, block) = take() {
            let result = Result { () throws(LogFormatError) in
                try frame.encodeBody(seed: seed, into: block, index: index)
            }
            progress.withLock { locked in
                switch result {
                case .success(let body): if index < locked.value.bodies.count { locked.value.bodies[index] = body }
                case .failure(let error): if locked.value.failure == nil { locked.value.failure = error }
                }
                locked.value.encodedCount += 1
            }
            progress.broadcast()
        }
    }

    /// Waits for the payload, encodes the frames no other thread has taken, waits for those the others took, and
    /// returns every body in order.
    ///
    /// - Throws: the error the payload's making failed with (``fail(_:)``), or a frame's.
    package func encodedFrames() throws(LogFormatError) -> EncodedTransactionFrames {
        progress.withLock { locked in
            precondition(!locked.value.isAbandoned, "the frames of an abandoned encoding are waited for")
            locked.wait(until: \.isSupplied)
        }
        help()
        let result = progress.withLock {
            (locked: inout ConditionLock<Progress>.Locked) -> Result<EncodedTransactionFrames, LogFormatError> in
            locked.wait(until: { $0.failure != nil || $0.encodedCount == $0.frames.count })
            if let failure = locked.value.failure { return .failure(failure) }
            // Every frame is encoded (none is still being encoded: the count covers each handed back).
            let bodies = locked.value.bodies.map { $0! }
            locked.value.bodies = []
            locked.value.frames = []
            locked.value.block = nil
            return .success(
                EncodedTransactionFrames(
                    transactionID: transactionID, seed: seed, payloadByteCount: locked.value.payloadByteCount,
                    bodies: bodies))
        }
        return try result.get()
    }

    /// Takes the next frame nobody has taken, if the payload is here and a frame is left.
    private func take() -> (Int, OutgoingFrame, FrameBodyBlock)? {
        progress.withLock { locked in
            guard locked.value.failure == nil, locked.value.next < locked.value.frames.count,
                let block = locked.value.block
            else { return nil }
            let index = locked.value.next
            locked.value.next += 1
            return (index, locked.value.frames[index], block)
        }
    }
}

/// A transaction payload's frames, compressed and checksummed (``SharedFrameEncoding``), ready to be queued.
package struct EncodedTransactionFrames: Sendable {
    /// The transaction whose payload they hold.
    package let transactionID: UInt64
    /// The checksum seed the bodies were made with.
    let seed: UInt32
    /// The payload's size in bytes.
    package let payloadByteCount: Int
    let bodies: [EncodedBody]
}
