import Dispatch

extension LogWriter {
    /// Appends one transaction: its blobs, then its changeset payload (split into fragments when it is larger than a
    /// fragment, 1 MiB by default). Returns when the transaction is as durable as the writer's mode promises.
    ///
    /// Equivalent to ``enqueueTransaction(id:payload:blobs:)`` followed by ``waitUntilDurable(_:)``.
    ///
    /// - Parameters:
    ///   - id: the transaction ID; must be greater than every earlier one.
    ///   - payload: the encoded ``Changeset``.
    ///   - blobs: externally stored binary values, referenced from the changeset as ``BlobReference``s by index.
    @discardableResult
    public func appendTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]] = []) throws(LogFormatError)
        -> AppendedTransaction
    {
        let pending = try enqueueTransaction(id: id, payload: payload, blobs: blobs)
        try waitUntilDurable(pending)
        return pending
    }

    /// Reserves the transaction's place in the log and queues its frames, without waiting for any I/O.
    ///
    /// Callers that allocate transaction IDs under their own lock (the object layer does) call this inside that
    /// lock, so that IDs reach the file in order, and call ``waitUntilDurable(_:)`` after releasing it: concurrent
    /// transactions then share one `fdatasync` (group commit). The frames are compressed here, under the caller's
    /// lock (the object layer compresses a large payload's frames ahead, beside its own work, and passes them to
    /// `enqueueTransaction(id:payload:blobs:encodedPayload:)`, a `package` overload); for very large transactions,
    /// prefer fewer, larger saves.
    public func enqueueTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]] = []) throws(LogFormatError)
        -> AppendedTransaction
    {
        try enqueueTransaction(id: id, payload: payload, blobs: blobs, encodedPayload: nil)
    }

    /// ``enqueueTransaction(id:payload:blobs:)`` for a payload whose frames may have been compressed and checksummed
    /// ahead, on other threads (``SharedFrameEncoding``): those bodies are queued as they are (the blobs' frames are
    /// encoded here), unless the log's file was rewritten since they were made, when every frame is encoded again
    /// with the new file's seed. The bytes queued are the same either way.
    package func enqueueTransaction(
        id: UInt64, payload: [UInt8], blobs: [[UInt8]], encodedPayload: EncodedTransactionFrames?
    ) throws(LogFormatError) -> AppendedTransaction {
        // The file's own limit, recorded in its header when it was created (readers reject anything larger).
        let limit = state.withLock { $0.value.header.transactionByteLimit }
        guard payload.count <= limit else {
            throw LogFormatError(
                .limitExceeded, "transaction \(id) is \(payload.count) bytes, over the log's limit of \(limit)",
                path: path)
        }
        var frames: [OutgoingFrame] = []
        for (index, blob) in blobs.enumerated() {
            frames.append(OutgoingFrame(type: .blob, transactionID: id, partIndex: UInt32(index), payload: blob))
        }
        let payloadFrames = OutgoingFrame.transactionFrames(
            id: id, payload: payload, fragmentByteCount: options.fragmentByteCount)
        frames += payloadFrames
        var encoded: (seed: UInt32, bodies: [EncodedBody])?
        if let encodedPayload {
            precondition(
                encodedPayload.transactionID == id && encodedPayload.payloadByteCount == payload.count
                    && encodedPayload.bodies.count == payloadFrames.count,
                "the frames encoded ahead are those of transaction \(encodedPayload.transactionID)'s payload")
            var bodies: [EncodedBody] = []
            bodies.reserveCapacity(frames.count)
            for frame in frames.prefix(blobs.count) {
                bodies.append(try frame.encodeBody(seed: encodedPayload.seed, dictionary: nil))
            }
            bodies += encodedPayload.bodies
            encoded = (encodedPayload.seed, bodies)
        }
        let placed = try reserve(frames, transactionID: id, encoded: encoded)
        let blobLocations = placed.prefix(blobs.count).map { frame in
            BlobLocation(
                transactionID: id, index: frame.partIndex, byteOffset: frame.byteOffset,
                byteCount: UInt32(frame.rawByteCount))
        }
        return AppendedTransaction(
            transactionID: id, byteOffset: placed.first!.byteOffset, endByteOffset: placed.last!.endByteOffset,
            blobs: blobLocations, fileGeneration: placed.last!.fileGeneration)
    }

    /// Waits until a queued transaction is as durable as the writer's mode promises: synced for `.full`, written
    /// to the OS for `.normal` and `.none`.
    ///
    /// - Throws: the write or sync error (the writer is then poisoned), for this and every transaction queued with
    ///   it that had not yet been made durable.
    public func waitUntilDurable(_ transaction: AppendedTransaction) throws(LogFormatError) {
        try state.withLock { (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) in
            try ensure(
                transaction.endByteOffset, of: transaction.fileGeneration, durable: options.durability == .full,
                &locked)
        }
    }

    /// Appends the model (a schema frame).
    package func append(schema: SchemaPayload) throws(LogFormatError) {
        let payload: [UInt8]
        payload = try encode { try schema.encoded() }
        let placed = try reserve([OutgoingFrame(type: .schema, payload: payload)], transactionID: nil)
        try state.withLock { (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) in
            try ensure(
                placed.last!.endByteOffset, of: placed.last!.fileGeneration, durable: options.durability == .full,
                &locked)
        }
    }

    /// Waits until everything appended so far is durable (an `fdatasync`, shared with concurrent appends).
    public func sync() throws(LogFormatError) {
        try state.withLock { (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) in
            // A poisoned writer must not report success even when nothing is pending (after a failed directory
            // sync, for example, the durability of the rename is unknown).
            try checkUsable(locked.value)
            try ensure(locked.value.reservedEnd, of: locked.value.fileGeneration, durable: true, &locked)
        }
    }

    /// Syncs everything, appends a seal (clean close), syncs it, and releases the writer lock and the file.
    ///
    /// Further calls fail with ``LogFormatError/Code/closed``. Closing a poisoned writer writes no seal and throws
    /// its poison, but releases the lock and the file all the same: nothing more can be written through it, and the
    /// store must be reopenable (the next open recovers from the file).
    public func close() throws(LogFormatError) {
        let alreadyClosed = state.withLock { $0.value.isClosed }
        if alreadyClosed { return }
        do {
            try sync()
            // A log whose header started near the end of the sequence numbers (only a crafted one) may have none
            // left for a seal. A log without a seal is valid — it reads as one whose writer stopped — so close
            // without it.
            let hasRoomForSeal = state.withLock { $0.value.nextSequence != UInt64.max }
            guard hasRoomForSeal else { return releaseStore() }
            // The seal is reserved and the writer marked closed in one critical section, so no append can land
            // after the seal; appends that were queued before it are synced by the seal's own durability wait.
            let placed = try reserve([OutgoingFrame(type: .seal, payload: [])], transactionID: nil, closing: true)
            try state.withLock { (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) in
                try ensure(placed.last!.endByteOffset, of: placed.last!.fileGeneration, durable: true, &locked)
            }
        } catch let error where error.code == .closed {
            return  // a concurrent close got there first, and releases the store
        } catch {
            releaseStore()
            throw error
        }
        releaseStore()
    }

    /// Marks the writer closed, releases the lock and drops the log's descriptor (closed when the last leader
    /// holding the file lets go; none can start once the writer is closed or poisoned).
    private func releaseStore() {
        let (box, lock) = state.withLock { locked in
            locked.value.isClosed = true
            let box = locked.value.fileBox
            locked.value.fileBox = nil
            return (box, locked.value.storeLock)
        }
        lock.release()
        withExtendedLifetime(box) {}
    }

    /// Where a frame landed.
    struct PlacedFrame {
        var byteOffset: UInt64
        var endByteOffset: UInt64
        var partIndex: UInt32
        var rawByteCount: Int
        /// The writer's file when the frame was placed (see ``LogWriter/State/fileGeneration``).
        var fileGeneration: UInt64
    }

    /// The checksum seed of the log's file now, which frame bodies are made with (a rewrite replaces it).
    package var frameSeed: UInt32 { state.withLock { $0.value.seed } }

    /// The largest fragment of a transaction's payload, in bytes (``Options/fragmentByteCount``).
    package var fragmentByteCount: Int { options.fragmentByteCount }

    /// Encodes `frames` (outside the writer's lock) — unless `encoded` holds their bodies, made with its seed —
    /// reserves their place and queues them.
    func reserve(
        _ frames: [OutgoingFrame], transactionID: UInt64?, closing: Bool = false,
        encoded: (seed: UInt32, bodies: [EncodedBody])? = nil
    ) throws(LogFormatError) -> [PlacedFrame] {
        let seed: UInt32
        var bodies: [EncodedBody] = []
        if let encoded {
            precondition(encoded.bodies.count == frames.count, "one body per frame")
            (seed, bodies) = encoded
        } else {
            seed = frameSeed
            bodies.reserveCapacity(frames.count)
            for frame in frames { bodies.append(try frame.encodeBody(seed: seed, dictionary: nil)) }
        }
        return try state.withLock {
            (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) -> [PlacedFrame] in
            try checkUsable(locked.value)
            if locked.value.seed != seed {
                // The log was rewritten between encoding and locking: the checksums need the new file's seed.
                let newSeed = locked.value.seed
                bodies = []
                for frame in frames { bodies.append(try frame.encodeBody(seed: newSeed, dictionary: nil)) }
            }
            // A frame's sequence number must stay below the largest (the reader rejects that one); only a file whose
            // header starts near the end of the range gets here.
            guard UInt64(bodies.count) <= UInt64.max - locked.value.nextSequence else {
                throw LogFormatError(
                    .limitExceeded,
                    "the log has used every frame sequence number (the next is \(locked.value.nextSequence)); salvage "
                        + "it into a new file to go on writing", path: path)
            }
            if let transactionID {
                guard transactionID > locked.value.lastTransactionID else {
                    throw LogFormatError(
                        .invalidArgument,
                        "transaction \(transactionID) does not follow transaction \(locked.value.lastTransactionID)",
                        path: path)
                }
                locked.value.lastTransactionID = transactionID
            }
            var placed: [PlacedFrame] = []
            let total = bodies.reduce(0) { $0 + Int($1.frameByteCount) }
            let watermark = locked.value.syncedEnd
            let seed = locked.value.seed
            var offset = locked.value.reservedEnd
            // Grown geometrically: an exact reservation per transaction would copy the queue once per small save.
            let needed = locked.value.queued.count + total
            if locked.value.queued.capacity < needed {
                locked.value.queued.reserveCapacity(max(needed, 2 * locked.value.queued.capacity))
            }
            for body in bodies {
                let size = Int(body.frameByteCount)
                body.append(
                    to: &locked.value.queued, sequence: locked.value.nextSequence, durableWatermark: watermark,
                    seed: seed)
                placed.append(
                    PlacedFrame(
                        byteOffset: offset, endByteOffset: offset + UInt64(size), partIndex: body.partIndex,
                        rawByteCount: Int(body.rawByteCount), fileGeneration: locked.value.fileGeneration))
                locked.value.nextSequence += 1
                offset += UInt64(size)
            }
            locked.value.reservedEnd = offset
            if closing { locked.value.isClosed = true }
            return placed
        }
    }

    func checkUsable(_ state: State) throws(LogFormatError) {
        if let poison = state.poison {
            throw LogFormatError(
                .poisoned,
                "an earlier write or sync failed (\(poison.message)); the writer accepts nothing more — reopen the "
                    + "store, which recovers from the file",
                path: path, systemErrno: poison.systemErrno)
        }
        if state.isClosed { throw LogFormatError(.closed, "the log writer is closed", path: path) }
    }

    /// Waits (as follower) or works (as leader) until `target` is written, and synced when `durable`.
    ///
    /// `target` is an offset in the file of `generation`. When a rewrite replaced that file meanwhile, the target is
    /// reached: the rewrite wrote and synced everything reserved in the old file, and copied it into the new one,
    /// before it adopted the new file (and an offset of the old file means nothing in the new one).
    func ensure(
        _ target: UInt64, of generation: UInt64, durable: Bool, _ locked: inout ConditionLock<State>.Locked
    ) throws(LogFormatError) {
        while true {
            if generation != locked.value.fileGeneration { return }
            let done = durable ? locked.value.syncedEnd >= target : locked.value.writtenEnd >= target
            if done { return }
            if locked.value.poison != nil { try checkUsable(locked.value) }
            if locked.value.leaderActive {
                locked.wait()
                continue
            }
            guard let box = locked.value.fileBox else {
                throw LogFormatError(.closed, "the log writer is closed", path: path)
            }
            // Become the leader for everything queued so far.
            locked.value.leaderActive = true
            let batch = locked.value.queued
            let start = locked.value.queuedStart
            locked.value.queued = []
            locked.value.queuedStart = locked.value.reservedEnd
            let batchEnd = start + UInt64(batch.count)
            let unsynced = batchEnd - locked.value.syncedEnd
            let mode = options.durability
            let mustSync =
                durable || (mode == .normal && unsynced >= UInt64(options.normalSyncByteCount))
            let space = preallocation(
                batchEnd: batchEnd, closing: locked.value.isClosed && batchEnd == locked.value.reservedEnd,
                locked.value, inMemory: box.file.isInMemory)
            let outcome: LogFormatError? = locked.unlocked { () -> LogFormatError? in
                do throws(LogFormatError) {
                    if !batch.isEmpty { try box.file.write(batch, at: start) }
                    switch space {
                    case .unchanged: break
                    case .extend(let end): try box.file.writeZeros(from: batchEnd, to: end)
                    case .trim: try box.file.cutZeros(after: batchEnd)
                    }
                    if mustSync && mode != .none { try box.file.sync() }
                    return nil
                } catch {
                    // Best effort: cut the failed frames off so that they cannot reappear on reopen.
                    try? box.file.truncate(to: start)
                    return error
                }
            }
            locked.value.leaderActive = false
            if let outcome {
                locked.value.poison = outcome
                locked.value.allocatedEnd = start
                locked.owner.broadcast()
                throw outcome
            }
            switch space {
            case .unchanged: locked.value.allocatedEnd = max(locked.value.allocatedEnd, batchEnd)
            case .extend(let end): locked.value.allocatedEnd = end
            case .trim: locked.value.allocatedEnd = batchEnd
            }
            locked.value.writtenEnd = batchEnd
            if mustSync {
                locked.value.syncedEnd = batchEnd
                if mode != .none { locked.value.syncCount += 1 }
            }
            locked.owner.broadcast()
            if mode == .normal && locked.value.syncedEnd < locked.value.writtenEnd && !locked.value.syncScheduled {
                locked.value.syncScheduled = true
                scheduleNormalSync()
            }
        }
    }

    /// `.normal` durability: sync within the interval after unsynced data appeared.
    private func scheduleNormalSync() {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(options.normalSyncInterval)) {
            [weak self] in
            guard let self else { return }
            self.state.withLock { $0.value.syncScheduled = false }
            try? self.sync()
        }
    }
}
