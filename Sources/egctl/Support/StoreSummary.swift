import EventGraph
import Foundation
import LogFormat

/// What `inspect` reports, as text and JSON.
struct StoreSummary {
    let loaded: StoreLoader.Loaded

    init(_ loaded: StoreLoader.Loaded) { self.loaded = loaded }

    var header: LogFileHeader { loaded.reader.header }
    var report: ScanReport { loaded.report }

    var countsByEntity: [(String, Int)] {
        var counts: [String: Int] = [:]
        for object in loaded.graph.objectReferences {
            counts[loaded.graph.catalog?.entityName(object.entityIndex) ?? "#\(object.entityIndex)", default: 0] += 1
        }
        for entity in loaded.graph.catalog?.schema.entities ?? [] where counts[entity.name] == nil {
            counts[entity.name] = 0
        }
        return counts.sorted { $0.key < $1.key }
    }

    /// The other stores this store's log names (those it was opened with), with the live references into each.
    var foreignStoreCounts: [ForeignStoreCount] { loaded.graph.foreignReferenceCounts() }

    var compressionRatio: Double {
        report.storedBodyByteCount == 0 ? 1 : Double(report.rawPayloadByteCount) / Double(report.storedBodyByteCount)
    }

    var tailText: String {
        switch report.tail {
        case .clean:
            report.endsWithSeal ? "clean (sealed: last close was clean)" : "clean (not sealed: open or crashed)"
        case .torn(let tail) where tail.isPreallocatedSpace:
            (report.endsWithSeal ? "clean (sealed)" : "clean (not sealed: open or crashed)")
                + ", then \(tail.byteCount) bytes of preallocated space (zeros, not data) at byte offset "
                + "\(tail.byteOffset)"
        case .torn(let tail): "torn tail of \(tail.byteCount) bytes at byte offset \(tail.byteOffset) (\(tail.reason))"
        case .damaged(let damage): "DAMAGED — \(damage.summary)"
        }
    }

    var text: String {
        var lines: [String] = []
        lines.append("store        \(loaded.reader.path)")
        lines.append("format       \(header.majorVersion).\(header.minorVersion)")
        lines.append("store UUID   \(header.storeUUID)")
        lines.append("file UUID    \(header.fileUUID)   generation \(header.generation)")
        lines.append("created      \(Date(commitTimeMicroseconds: header.createdMicroseconds).iso8601Text)")
        lines.append(
            "size         \(Formatting.bytes(report.fileByteCount)) (\(report.fileByteCount) bytes), "
                + "\(report.frameCount) frames")
        lines.append(
            "compression  \(Formatting.decimal(compressionRatio, digits: 2))× "
                + "(\(Formatting.bytes(report.rawPayloadByteCount)) of payload in "
                + "\(Formatting.bytes(report.storedBodyByteCount)))")
        var transactions = "\(loaded.appliedTransactionCount) in the log, last \(report.lastTransactionID)"
        if let first = loaded.firstCommitMicroseconds {
            transactions +=
                ", \(Date(commitTimeMicroseconds: first).iso8601Text) … "
                + Date(commitTimeMicroseconds: loaded.graph.lastCommitTimeMicroseconds).iso8601Text
        }
        lines.append("transactions \(transactions)")
        if let checkpoint = loaded.lastCheckpoint {
            lines.append(
                "checkpoint   covers transactions up to \(checkpoint.transactionID), at byte offset "
                    + "\(checkpoint.byteOffset)")
        } else {
            lines.append("checkpoint   none (the whole history is in the log)")
        }
        lines.append("tail         \(tailText)")
        if let part = loaded.undecidedPart { lines.append("undecided    \(part.text)") }
        if let schema = loaded.graph.catalog?.schema {
            lines.append("")
            lines.append(
                "model        \(schema.modelName), version \(schema.versionIdentifier), hash "
                    + String(schema.modelHash, radix: 16))
            lines.append(contentsOf: ModelDiagram.text(schema).map { "  " + $0 })
        }
        lines.append("")
        lines.append("objects      \(loaded.graph.objectCount)")
        for (name, count) in countsByEntity { lines.append("  \(name): \(count)") }
        lines.append("")
        let counters = loaded.graph.sequenceReservations
        lines.append("counters     \(counters.isEmpty ? "none" : "\(counters.count)")")
        for counter in counters { lines.append("  \(counter.name): last value \(counter.lastValue)") }
        lines.append("")
        let foreign = foreignStoreCounts
        lines.append("other stores \(foreign.isEmpty ? "none" : "\(foreign.count)")")
        for count in foreign {
            lines.append("  \(count.store): \(count.referenceCount) reference\(count.referenceCount == 1 ? "" : "s")")
        }
        return lines.joined(separator: "\n")
    }

    var json: [String: Any] {
        var object: [String: Any] = [
            "path": loaded.reader.path,
            "formatVersion": "\(header.majorVersion).\(header.minorVersion)",
            "storeUUID": "\(header.storeUUID)",
            "fileUUID": "\(header.fileUUID)",
            "generation": header.generation,
            "createdAt": Date(commitTimeMicroseconds: header.createdMicroseconds).iso8601Text,
            "fileByteCount": report.fileByteCount,
            "frameCount": report.frameCount,
            "payloadByteCount": report.rawPayloadByteCount,
            "storedByteCount": report.storedBodyByteCount,
            "compressionRatio": compressionRatio,
            "transactionCount": loaded.appliedTransactionCount,
            "lastTransactionID": report.lastTransactionID,
            "sealed": report.endsWithSeal,
            "tail": TailJSON.json(report.tail),
            "undecidedSaveAcrossStores": loaded.undecidedPart?.json ?? NSNull(),
            "objectCount": loaded.graph.objectCount,
            "objectsByEntity": Dictionary(uniqueKeysWithValues: countsByEntity),
            "counters": loaded.graph.sequenceReservations.map(\.json),
            "foreignStores": foreignStoreCounts.map {
                ["storeUUID": "\($0.store)", "referenceCount": $0.referenceCount]
            },
        ]
        if let first = loaded.firstCommitMicroseconds {
            object["firstCommitAt"] = Date(commitTimeMicroseconds: first).iso8601Text
            object["lastCommitAt"] = Date(commitTimeMicroseconds: loaded.graph.lastCommitTimeMicroseconds).iso8601Text
        }
        if let checkpoint = loaded.lastCheckpoint {
            object["checkpoint"] = ["lastTransactionID": checkpoint.transactionID, "byteOffset": checkpoint.byteOffset]
        }
        if let schema = loaded.graph.catalog?.schema { object["model"] = ModelDiagram.json(schema) }
        return object
    }
}

extension SequenceReservation {
    /// A named counter as JSON: its name and the last value it handed out.
    var json: [String: Any] { ["name": name, "lastValue": lastValue] }
}

/// The tail of a scan as JSON.
enum TailJSON {
    static func json(_ tail: LogTail) -> [String: Any] {
        switch tail {
        case .clean:
            return ["state": "clean"]
        case .torn(let torn) where torn.isPreallocatedSpace:
            // Zeros a writer keeps ahead of its last frame: not data, and not a torn tail (Docs/FileFormat.md §4).
            return ["state": "preallocated", "byteOffset": torn.byteOffset, "byteCount": torn.byteCount]
        case .torn(let torn):
            return ["state": "torn", "byteOffset": torn.byteOffset, "byteCount": torn.byteCount, "reason": torn.reason]
        case .damaged(let damage):
            var object: [String: Any] = ["state": "damaged", "byteOffset": damage.byteOffset, "reason": damage.reason]
            if let range = damage.affectedTransactionIDs {
                object["affectedTransactions"] = ["first": range.lowerBound, "last": range.upperBound]
            }
            if let last = damage.lastGoodTransactionID { object["lastGoodTransactionID"] = last }
            if let next = damage.nextGoodByteOffset { object["nextGoodByteOffset"] = next }
            return object
        }
    }
}
