import ArgumentParser
import EventGraph
import Foundation
import LogFormat

/// `egctl history STORE OBJECT-URI [--json]`
struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Every change to one object: transaction, time, author, old → new values, relationship changes.",
        discussion: """
            <object-uri> is the object's URI as dump prints it, \
            eventgraph://<store UUID>/<entity>/<key>; the store UUID may be left out: eventgraph:///Post/42.

            Example:
              egctl history blog.eglog eventgraph:///Post/42
            """)

    @OptionGroup var store: StoreArgument
    @Argument(help: ArgumentHelp("The object's URI, e.g. eventgraph:///Post/42.", valueName: "object-uri"))
    var object: String
    @OptionGroup var output: OutputOptions

    /// Parses `eventgraph://[uuid]/Entity/key` with the library's object-ID parser; a left-out store UUID is the
    /// store's own.
    static func parse(_ uri: String, storeUUID: LogUUID) -> ObjectID? {
        let anyStore = "eventgraph:///"
        let text = uri.hasPrefix(anyStore) ? "eventgraph://\(storeUUID)/" + uri.dropFirst(anyStore.count) : uri
        guard let id = ObjectID(uriString: text), !id.isTemporary else { return nil }
        return id
    }

    /// The checkpoint that replaced the transactions up to its own, when the log holds none of them: the log's last
    /// checkpoint, unless a transaction it covers was read before it.
    static func historyGone(
        checkpoint: (transactionID: UInt64, byteOffset: UInt64)?, firstTransactionID: UInt64?
    ) -> (transactionID: UInt64, byteOffset: UInt64)? {
        guard let checkpoint, checkpoint.transactionID > 0 else { return nil }
        if let firstTransactionID, firstTransactionID <= checkpoint.transactionID { return nil }
        return checkpoint
    }

    func run() throws {
        try Failure.guarding {
            let reader = try LogReader(path: store.store)
            guard let target = Self.parse(object, storeUUID: reader.header.storeUUID) else {
                throw ValidationError(
                    "'\(object)' is not an object URI; expected eventgraph://<store UUID>/<Entity>/<key>")
            }
            if target.storeUUID != UUID(logUUID: reader.header.storeUUID) {
                throw ValidationError(
                    "\(object) names store \(target.storeUUID), but \(store.store) is store \(reader.header.storeUUID)")
            }
            var entries: [[String: Any]] = []
            var found = false
            var before = LogGraph()
            var firstTransactionID: UInt64?
            let loaded = try StoreLoader.load(store.store, label: "history") { changeset, _, after in
                defer { before = after }
                if firstTransactionID == nil { firstTransactionID = changeset.transactionID }
                guard let entityIndex = after.catalog?.entityIndex(named: target.entityName) else { return }
                found = true
                let reference = ObjectReference(entityIndex: UInt32(entityIndex), key: target.key)
                let renderer = ChangesetRenderer(graph: after, storeUUID: reader.header.storeUUID)
                var changes: [String] = []
                var jsonChanges: [[String: Any]] = []
                for operation in changeset.operations {
                    switch operation {
                    case .insert(let object, let values) where object == reference:
                        changes.append("inserted")
                        jsonChanges.append(["op": "insert"])
                        for value in values {
                            let name = renderer.propertyName(object, value.propertyIndex, after)
                            changes.append(
                                "  \(name) = \(renderer.valueText(value.value, after, changeset.foreignStores))")
                            jsonChanges.append([
                                "property": name,
                                "new": renderer.valueJSON(value.value, after, changeset.foreignStores),
                            ])
                        }
                    case .update(let object, let values) where object == reference:
                        for value in values {
                            let name = renderer.propertyName(object, value.propertyIndex, after)
                            let old = before.value(of: object, property: Int(value.propertyIndex))
                            let oldText = old.map { renderer.valueText($0, before, []) } ?? "?"
                            changes.append(
                                "\(name): \(oldText) → \(renderer.valueText(value.value, after, changeset.foreignStores))"
                            )
                            var entry: [String: Any] = [
                                "property": name,
                                "new": renderer.valueJSON(value.value, after, changeset.foreignStores),
                            ]
                            if let old { entry["old"] = renderer.valueJSON(old, before, []) }
                            jsonChanges.append(entry)
                        }
                    case .relate(let object, let property, let added, let removed) where object == reference:
                        let name = renderer.propertyName(object, property, after)
                        let foreign = changeset.foreignStores
                        if !added.isEmpty {
                            changes.append(
                                "\(name) += " + added.map { renderer.uri($0, after, foreign) }.joined(separator: ", "))
                        }
                        if !removed.isEmpty {
                            changes.append(
                                "\(name) -= " + removed.map { renderer.uri($0, after, foreign) }.joined(separator: ", ")
                            )
                        }
                        jsonChanges.append([
                            "relationship": name, "added": added.map { renderer.uri($0, after, foreign) },
                            "removed": removed.map { renderer.uri($0, after, foreign) },
                        ])
                    case .delete(let object) where object == reference:
                        changes.append("deleted")
                        jsonChanges.append(["op": "delete"])
                    default:
                        continue
                    }
                }
                guard !changes.isEmpty else { return }
                let time = Date(commitTimeMicroseconds: changeset.commitTimeMicroseconds).iso8601Text
                entries.append([
                    "transaction": changeset.transactionID, "time": time, "author": changeset.author,
                    "changes": jsonChanges,
                ])
                if !output.json {
                    print(
                        "transaction \(changeset.transactionID)  \(time)"
                            + (changeset.author.isEmpty ? "" : "  by \(changeset.author)"))
                    for change in changes { print("  " + change) }
                }
            }
            if let part = loaded.undecidedPart { Terminal.warn("egctl: note: " + part.text) }
            // A log that starts with a checkpoint (after a compaction, or a migration that kept only the live state)
            // has no record of the transactions the checkpoint replaced.
            let gone = Self.historyGone(checkpoint: loaded.lastCheckpoint, firstTransactionID: firstTransactionID)
            // With no transaction after a checkpoint, the entity is looked up in the state the checkpoint holds.
            if !found, loaded.graph.catalog?.entityIndex(named: target.entityName) == nil {
                throw ValidationError("the store's model has no entity named '\(target.entityName)'")
            }
            let goneText = gone.map {
                "the log keeps no history up to transaction \($0.transactionID): a checkpoint (at byte offset "
                    + "\($0.byteOffset)) replaced it, after a compaction or a migration that kept only the live state"
            }
            if output.json {
                // JSON's null when the log keeps every transaction.
                let goneUpTo: Any = if let gone { gone.transactionID } else { NSNull() }
                JSONOutput.print([
                    "object": object, "history": entries,
                    "historyGoneUpToTransaction": goneUpTo,
                    "undecidedSaveAcrossStores": loaded.undecidedPart?.json ?? NSNull(),
                ])
            } else if entries.isEmpty {
                print("no changes to \(object) in the log" + (goneText.map { "; \($0)" } ?? ""))
            } else if let goneText {
                print("(\(goneText))")
            }
        }
    }
}
