import EventGraph
import Foundation
import LogFormat
import Synchronization

/// Replays a store file read-only through EventGraph's replay engine (a ``LogGraph``: the library's state type and
/// changeset applier, with the tolerant policy), with progress on a terminal.
struct StoreLoader {
    /// Where to stop replaying.
    enum Limit {
        case none
        case transaction(UInt64)
        case time(microseconds: Int64)
    }

    /// What a replay produced.
    struct Loaded {
        var reader: LogReader
        var graph: LogGraph
        var report: ScanReport
        var firstCommitMicroseconds: Int64?
        var lastCheckpoint: (transactionID: UInt64, byteOffset: UInt64)?
        var appliedTransactionCount: Int
        /// What the log says about saves across stores (the library's ledger, kept as the store keeps it).
        var ledger: CrossStoreLedger
        /// The part of a save across stores the log ends with, undecided (`Docs/FileFormat.md` §3.6): held back
        /// from ``graph`` until the stores given decide it committed (``admitUndecidedPart()``).
        var undecidedPart: UndecidedPart?

        /// The transaction IDs the log lacks (the gaps a salvage leaves), as "3" or "7...9".
        var missingTransactionIDs: [String] {
            graph.transactionIDGaps.map { ids in
                ids.lowerBound == ids.upperBound ? "\(ids.lowerBound)" : "\(ids.lowerBound)...\(ids.upperBound)"
            }
        }

        var storeUUID: LogUUID { reader.header.storeUUID }

        /// The log as the cross-store decision reads it.
        var decisionLog: CrossStoreDecision.Log {
            CrossStoreDecision.Log(storeUUID: storeUUID, path: reader.path, ledger: ledger)
        }

        /// Applies the held-back part (the stores given decided that its save committed).
        mutating func admitUndecidedPart() {
            guard let part = undecidedPart else { return }
            graph.apply(part.changeset, blobs: part.transaction.blobs)
            appliedTransactionCount += 1
            undecidedPart?.decision = .committed
        }

        /// Decides the held-back part with the other stores given (`logs` may include this one); applies it when
        /// its save committed.
        mutating func decideUndecidedPart(among logs: [CrossStoreDecision.Log]) throws {
            guard let record = undecidedPart?.changeset.crossStore else { return }
            let decision = try CrossStoreDecision(record, among: logs)
            if decision == .committed {
                admitUndecidedPart()
            } else {
                undecidedPart?.decision = decision
            }
        }
    }

    /// Replays `path` up to `limit`, calling `each` with every applied changeset.
    ///
    /// A part of a save across stores that is the log's last transaction, with no seal after it, is undecided
    /// (the library's ``CrossStoreLedger`` says so, as it does for the store): it is neither applied nor handed
    /// to `each`, but returned as ``Loaded/undecidedPart``, as the store's own read-only view leaves it out.
    static func load(
        _ path: String, label: String = "replay", limit: Limit = .none, checksStoredIndexes: Bool = false,
        each: ((Changeset, TransactionRecord, LogGraph) throws -> Void)? = nil
    ) throws -> Loaded {
        // Without a caller that sees each changeset, the scan leaves transaction frames compressed and each
        // transaction's decoding (on the decoding thread, for a large one) decompresses them: the LZ4 blocks are
        // decompressed once, off the replaying thread (h79 in BENCHMARKS.md). A block that does not decompress is
        // what a verifying scan classifies as damage or a torn tail at its frame; that pass fails (the decoding or
        // the scan throws), is dropped, and the log is replayed again with a verifying scan, whose result — state,
        // report, errors — is the one returned, exactly as without deferring.
        if each == nil && deferringDecompression {
            if let loaded = try? loadOnce(
                path, label: label, limit: limit, checksStoredIndexes: checksStoredIndexes, each: nil,
                defersDecompression: true)
            {
                return loaded
            }
        }
        return try loadOnce(
            path, label: label, limit: limit, checksStoredIndexes: checksStoredIndexes, each: each,
            defersDecompression: false)
    }

    /// The smallest payload decoded on the decoding thread: the library's default (64 KiB), or the byte count in the
    /// environment variable `EGCTL_DECODE_ASIDE_BYTES` (for tests: 0 decodes every transaction aside).
    private static let smallestPayloadDecodedAside =
        ProcessInfo.processInfo.environment["EGCTL_DECODE_ASIDE_BYTES"].flatMap { Int($0) }
        ?? DecodingAhead.defaultSmallestPayloadDecodedAside

    /// Whether a load without `each` defers decompression to decoding: yes, unless the environment variable
    /// `EGCTL_DEFER_DECOMPRESSION` is `0` (for tests that compare both ways).
    private static let deferringDecompression =
        ProcessInfo.processInfo.environment["EGCTL_DEFER_DECOMPRESSION"] != "0"

    private static func loadOnce(
        _ path: String, label: String, limit: Limit, checksStoredIndexes: Bool,
        each: ((Changeset, TransactionRecord, LogGraph) throws -> Void)?, defersDecompression: Bool
    ) throws -> Loaded {
        let reader = try LogReader(path: path)
        var graph = LogGraph(source: path)
        graph.checksStoredIndexes = checksStoredIndexes
        // A checkpoint's entity chunks are checksummed by the scan and decoded by the graph, on every core, when the
        // checkpoint ends (the library's chunk decoder).
        graph.chunkReader = reader
        var ledger = CrossStoreLedger()
        var held: (changeset: ReplayChangeset, transaction: TransactionRecord)?
        var first: Int64?
        var checkpoint: (UInt64, UInt64)?
        var applied = 0
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64) ?? 0
        let progress = Progress(label, totalByteCount: size)
        defer { progress.finish() }
        let prefaulter = HeapPrefaulter.start(forStoreOf: size)
        defer { prefaulter?.report() }
        // Changesets are decoded flat, their values going from the payload into the state's columns; a whole
        // `Changeset` is built only for a caller that reads them (`each`).
        func apply(_ changeset: ReplayChangeset, _ transaction: TransactionRecord) throws {
            graph.apply(changeset, blobs: transaction.blobs)
            applied += 1
            if first == nil { first = changeset.header.commitTimeMicroseconds }
            try each?(changeset.changeset, transaction, graph)
        }
        // Each record as the scan delivers it, in log order.
        func process(_ record: LogRecord, _ changeset: ReplayChangeset?) throws {
            ledger.note(record, crossStore: changeset?.header.crossStore)
            // A part held back is decided as committed by whatever the ledger takes as deciding it.
            if let part = held, ledger.undecided?.transactionID != part.transaction.transactionID {
                held = nil
                try apply(part.changeset, part.transaction)
            }
            switch record {
            case .transaction(let transaction):
                progress.update(byteOffset: transaction.byteOffset)
                let changeset = changeset!
                switch limit {
                case .transaction(let last) where changeset.transactionID > last: throw StopScan()
                case .time(let micros) where changeset.header.commitTimeMicroseconds > micros: throw StopScan()
                default: break
                }
                if ledger.undecided?.transactionID == transaction.transactionID {
                    held = (changeset, transaction)
                } else {
                    try apply(changeset, transaction)
                }
            case .checkpointBegin(let begin, let offset):
                if case .transaction(let last) = limit, begin.lastTransactionID > last {
                    throw LogFormatError(
                        .invalidArgument,
                        "transaction \(last) is not in the log: the checkpoint at byte offset \(offset) replaced "
                            + "the transactions up to \(begin.lastTransactionID) (a compaction, or a migration that "
                            + "kept only the live state); the state before that is gone",
                        path: path)
                }
                checkpoint = (begin.lastTransactionID, offset)
                try graph.apply(record)
                if first == nil { first = begin.lastCommitTimeMicroseconds }
            default:
                if case .checkpointChunk(_, let offset) = record { progress.update(byteOffset: offset) }
                try graph.apply(record)
            }
        }
        // Transactions' changesets are decoded on another thread ahead of the one applied (the replay's two halves on
        // two cores), by the library's `DecodingAhead` as a store's open does; every record is still processed here,
        // one at a time, in log order. With only the next transaction decoded ahead, the replaying thread waited for
        // the decoding of each large transaction that followed a small one (≈ 0.5 s of a 1.4 s replay of the
        // 1M-post demo store).
        var pending = DecodingAhead(
            smallestPayloadDecodedAside: smallestPayloadDecodedAside, companion: prefaulter)
        var report: ScanReport?
        do {
            do {
                report = try reader.scan(
                    defersEntityChunkBodies: true, checksumsDeferredBodies: true,
                    defersTransactionDecompression: defersDecompression
                ) { record in try pending.take(record, process: process) }
            } catch let error where !(error is StopScan) {
                // The transactions before the failure were delivered: processed first, as they would have been.
                try pending.drain(process)
                throw error
            }
            try pending.drain(process)
        } catch is StopScan {
            report = nil
        }
        ReplayDiagnostics.report("transactions waiting to be applied: at most \(pending.maxWaitingCount)")
        if let arenas = ReplayDiagnostics.arenaCount { ReplayDiagnostics.report("malloc arenas: \(arenas)") }
        // A stopped scan still needs a report of the whole file's condition for the caller (a second pass that
        // only verifies frames).
        let finalReport = try report ?? reader.scan()
        return Loaded(
            reader: reader, graph: graph, report: finalReport, firstCommitMicroseconds: first,
            lastCheckpoint: checkpoint, appliedTransactionCount: applied, ledger: ledger,
            undecidedPart: held.map {
                UndecidedPart(
                    changeset: $0.changeset.changeset, transaction: $0.transaction, storeUUID: reader.header.storeUUID)
            })
    }
}
