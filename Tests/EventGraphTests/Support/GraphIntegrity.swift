import LogFormat
import Synchronization

@testable import EventGraph

/// The two views of a store that must agree and be sound: its live in-memory state and what its log replays to.
/// Both are checked by `LogGraph.integrityIssues()`, the checker `egctl verify` uses (inverses, dangling references,
/// uniqueness).
enum GraphIntegrity {
    /// The graph of the store's committed in-memory state (the snapshot every context reads from).
    static func liveGraph(of container: ModelContainer) -> LogGraph {
        let store = container.store
        return LogGraph(model: store.model, state: store.state.withLock { $0 })
    }

    /// The graph the log file replays to, read with LogFormat's reader alone.
    static func replayedGraph(path: String) throws -> LogGraph {
        var graph = LogGraph()
        _ = try LogReader(path: path).scan { record in _ = try graph.apply(record) }
        return graph
    }

    /// Every integrity issue of the live state, then of the replayed log (labelled), plus a line when their digests
    /// differ.
    static func issues(_ container: ModelContainer) throws -> [String] {
        let live = liveGraph(of: container)
        var issues = live.integrityIssues().map { "live: \($0)" }
        if let path = container.path {
            let replayed = try replayedGraph(path: path)
            issues += replayed.integrityIssues().map { "log: \($0)" }
            if replayed.digest() != live.digest() {
                issues.append("the log replays to digest \(replayed.digest()), the live state is \(live.digest())")
            }
        }
        return issues
    }
}
