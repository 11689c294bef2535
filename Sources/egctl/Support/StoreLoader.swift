import EventGraph
import Foundation
import LogFormat

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

        /// The transaction IDs the log lacks (the gaps a salvage leaves), as "3" or "7...9".
        var missingTransactionIDs: [String] {
            graph.transactionIDGaps.map { ids in
                ids.lowerBound == ids.upperBound ? "\(ids.lowerBound)" : "\(ids.lowerBound)...\(ids.upperBound)"
            }
        }
    }

    /// Stops a scan early without it counting as an error.
    private struct StopScan: Error {}

    /// Replays `path` up to `limit`, calling `each` with every applied changeset.
    static func load(
        _ path: String, label: String = "replay", limit: Limit = .none,
        each: (Changeset, TransactionRecord, LogGraph) throws -> Void = { _, _, _ in }
    ) throws -> Loaded {
        let reader = try LogReader(path: path)
        var graph = LogGraph(source: path)
        var first: Int64?
        var checkpoint: (UInt64, UInt64)?
        var applied = 0
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64) ?? 0
        let progress = Progress(label, totalByteCount: size)
        defer { progress.finish() }
        var report: ScanReport?
        do {
            report = try reader.scan { record in
                switch record {
                case .transaction(let transaction):
                    progress.update(byteOffset: transaction.byteOffset)
                    let changeset = try transaction.changeset()
                    switch limit {
                    case .transaction(let last) where changeset.transactionID > last: throw StopScan()
                    case .time(let micros) where changeset.commitTimeMicroseconds > micros: throw StopScan()
                    default: break
                    }
                    graph.apply(changeset, blobs: transaction.blobs)
                    applied += 1
                    if first == nil { first = changeset.commitTimeMicroseconds }
                    try each(changeset, transaction, graph)
                case .checkpointBegin(let begin, let offset):
                    if case .transaction(let last) = limit, begin.lastTransactionID > last {
                        throw LogFormatError(
                            .invalidArgument,
                            "transaction \(last) was compacted into the checkpoint at byte offset \(offset), which "
                                + "covers transactions up to \(begin.lastTransactionID); its state before that is gone",
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
        } catch is StopScan {
            report = nil
        }
        // A stopped scan still needs a report of the whole file's condition for the caller (a second pass that
        // only verifies frames).
        let finalReport = try report ?? reader.scan()
        return Loaded(
            reader: reader, graph: graph, report: finalReport, firstCommitMicroseconds: first,
            lastCheckpoint: checkpoint, appliedTransactionCount: applied)
    }
}
