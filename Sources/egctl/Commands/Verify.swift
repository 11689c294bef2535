import ArgumentParser
import EventGraph
import Foundation
import LogFormat

/// `egctl verify STORE… [--json]`
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check everything: header, checksums, sequence numbers, every payload, and the replayed graph.",
        discussion: """
            Graph checks: inverses agree, references within the store point at live objects, uniqueness constraints \
            hold, and replay found nothing inconsistent. Given several stores (the stores of one container), it \
            also checks the references between them: each must point at a live object of the other store, whose \
            inverse relationship points back; the dangling ones and those without their inverse are listed with \
            the objects that hold them. References into stores not given are counted, not checked.

            Exit status: 0 when everything committed is intact (a torn, never-synced tail is reported as such, not as \
            damage); 1 when damage or a broken reference between the given stores is found (with byte offset and \
            affected transactions, or the objects); 2 for usage errors or a file that is not a store.

            Examples:
              egctl verify blog.eglog
              egctl verify blog.eglog --json || echo "damaged"
              egctl verify private.eglog public.eglog
            """)

    @Argument(help: "Paths of store log files (several: the stores of one container).", completion: .file())
    var stores: [String]
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !stores.isEmpty else { throw ValidationError("give at least one store") }
    }

    func run() throws {
        try Failure.guarding {
            var verified: [StoreVerification] = []
            for path in stores {
                let store = try StoreVerification(path: path)
                if let earlier = verified.first(where: { $0.storeUUID == store.storeUUID }) {
                    throw ValidationError(
                        "\(earlier.path) and \(path) are the same store (UUID \(store.storeUUID)); give each store once"
                    )
                }
                verified.append(store)
            }
            // A part of a save across stores that a log ends with counts only as the store decides it, from the
            // stores given (one store alone: undecided, left out).
            let logs = verified.map(\.loaded.decisionLog)
            for index in verified.indices { try verified[index].decideUndecidedPart(among: logs) }
            var damaged = verified.contains { $0.isDamaged }
            guard verified.count > 1 else {
                if output.json { JSONOutput.print(verified[0].json) } else { print(verified[0].text) }
                if damaged { throw ExitStatus.damage }
                return
            }
            let check = LogGraph.checkForeignReferences(among: verified.map { ($0.storeUUID, $0.loaded.graph) })
            if !check.dangling.isEmpty || !check.inverseMismatches.isEmpty { damaged = true }
            if output.json {
                JSONOutput.print([
                    "intact": !damaged,
                    "stores": verified.map(\.json),
                    "foreignReferences": Self.json(check, verified),
                ])
            } else {
                for store in verified { print("store        \(store.path)\n" + store.text + "\n") }
                print(Self.text(check).joined(separator: "\n"))
                print(damaged ? "result       DAMAGED" : "result       intact")
            }
            if damaged { throw ExitStatus.damage }
        }
    }

    private static func text(_ check: ForeignReferenceCheck) -> [String] {
        var lines = ["references   \(check.checkedCount) between the stores checked, \(check.dangling.count) dangling"]
        for dangling in check.dangling { lines.append("dangling     \(dangling)") }
        if !check.inverseMismatches.isEmpty {
            lines.append("inverses     \(check.inverseMismatches.count) do not point back")
        }
        for mismatch in check.inverseMismatches { lines.append("inverse      \(mismatch)") }
        for unchecked in check.uncheckedCounts {
            lines.append("unchecked    \(unchecked.referenceCount) into store \(unchecked.store) (not given)")
        }
        return lines
    }

    private static func json(_ check: ForeignReferenceCheck, _ stores: [StoreVerification]) -> [String: Any] {
        let byUUID = Dictionary(stores.map { ($0.storeUUID, $0) }, uniquingKeysWith: { first, _ in first })
        func entry(_ broken: DanglingForeignReference) -> [String: Any] {
            let graph = byUUID[broken.sourceStore]!.loaded.graph
            let renderer = ChangesetRenderer(graph: graph, storeUUID: broken.sourceStore)
            var target = broken.reference.target
            target.storeIndex = UInt32(graph.foreignStores.firstIndex(of: broken.reference.targetStore)! + 1)
            return [
                "store": "\(broken.sourceStore)",
                "object": renderer.uri(broken.reference.source, in: graph),
                "relationship": graph.propertyName(
                    broken.reference.propertyIndex, ofEntity: broken.reference.source.entityIndex),
                "target": renderer.uri(target, in: graph),
                "targetStore": "\(broken.reference.targetStore)",
                "message": broken.message,
            ]
        }
        return [
            "checked": check.checkedCount,
            "dangling": check.dangling.map(entry),
            "inverseMismatches": check.inverseMismatches.map(entry),
            "unchecked": check.uncheckedCounts.map {
                ["storeUUID": "\($0.store)", "referenceCount": $0.referenceCount]
            },
        ]
    }
}

/// One store's own checks: frames, payloads and the replayed graph.
private struct StoreVerification {
    let path: String
    private(set) var loaded: StoreLoader.Loaded
    private(set) var issues: [IntegrityIssue]
    let seconds: Double

    init(path: String) throws {
        let started = Progress.now()
        self.path = path
        loaded = try StoreLoader.load(path, label: "verify", checksStoredIndexes: true)
        seconds = Double(Progress.now() - started) / 1e9
        issues = loaded.graph.integrityIssues()
    }

    var storeUUID: LogUUID { loaded.reader.header.storeUUID }

    /// Decides the part of a save across stores the log ends with, if any, from the stores given; a part that
    /// committed is checked with the rest.
    mutating func decideUndecidedPart(among logs: [CrossStoreDecision.Log]) throws {
        guard loaded.undecidedPart != nil else { return }
        try loaded.decideUndecidedPart(among: logs)
        if loaded.undecidedPart?.isShown == true { issues = loaded.graph.integrityIssues() }
    }

    var isDamaged: Bool {
        if !issues.isEmpty || loaded.report.headerCopyDamaged { return true }
        if case .damaged = loaded.report.tail { return true }
        return false
    }

    var json: [String: Any] {
        let report = loaded.report
        return [
            "path": path,
            "intact": !isDamaged,
            "frames": report.frameCount,
            "transactions": report.transactionCount,
            "lastTransactionID": report.lastTransactionID,
            "objectCount": loaded.graph.objectCount,
            "stateDigest": loaded.graph.digest().description,
            "headerCopyDamaged": report.headerCopyDamaged,
            "tail": TailJSON.json(report.tail),
            "missingTransactionIDs": loaded.missingTransactionIDs,
            "undecidedSaveAcrossStores": loaded.undecidedPart?.json ?? NSNull(),
            "issues": issues.map { ["kind": $0.kind.rawValue, "message": $0.message] },
            "seconds": seconds,
        ]
    }

    var text: String {
        let report = loaded.report
        var lines: [String] = []
        lines.append("frames       \(report.frameCount) verified (\(Formatting.bytes(report.committedByteCount)))")
        lines.append("transactions \(report.transactionCount), last \(report.lastTransactionID)")
        lines.append("objects      \(loaded.graph.objectCount)")
        lines.append(
            "header       \(report.headerCopyDamaged ? "one copy DAMAGED (the other copy was used)" : "both copies intact")"
        )
        lines.append("tail         \(StoreSummary(loaded).tailText)")
        if !loaded.missingTransactionIDs.isEmpty {
            // Not damage: the transactions a salvage could not read were left out, and the store opens.
            lines.append(
                "gaps         transaction IDs missing: \(loaded.missingTransactionIDs.joined(separator: ", ")) "
                    + "(left out by a salvage)")
        }
        if let part = loaded.undecidedPart { lines.append("undecided    \(part.text)") }
        if issues.isEmpty {
            lines.append("graph        intact (inverses, references, uniqueness)")
        } else {
            for issue in issues { lines.append("graph        \(issue)") }
        }
        lines.append(isDamaged ? "result       DAMAGED" : "result       intact")
        return lines.joined(separator: "\n")
    }
}
