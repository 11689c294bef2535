import EventGraph
import EventGraphExamples
import Foundation

extension EventGraphEngine {
    /// A save after which the log file shrank: the automatic checkpoint it ran rewrote the log.
    public struct CheckpointFiring: Sendable {
        /// The save's number among the updates (1-based): the transactions committed since the first update.
        public var saveNumber: Int
        /// How long the save took (it writes the checkpoint before it returns).
        public var seconds: Double
    }

    /// Single-post title saves (as ``updateTitles(path:generator:count:batchSize:)`` with batches of one) in a
    /// container whose automatic checkpoint fires every `threshold` transactions; returns where it fired and the
    /// median time of the other saves. The firing is seen from outside, through the public API only: the log file
    /// is smaller after the save than before it.
    public static func updateTitlesWithAutomaticCheckpoints(
        path: String, generator: PostGenerator, count: Int, threshold: Int
    ) throws -> (firings: [CheckpointFiring], medianSaveSeconds: Double) {
        var settings = configuration(.relaxed)
        settings.automaticCheckpointTransactionCount = threshold
        let container = try ModelContainer(path: path, model: BlogLibrary.model, configuration: settings)
        defer { try? container.close() }
        var ids: [Int64: ObjectID] = [:]
        do {
            let context = container.newBackgroundContext()
            for post in try context.fetch(FetchDescriptor<Post>()) { ids[post.identity] = post.objectID }
        }
        func byteCount() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0
        }
        var firings: [CheckpointFiring] = []
        var others: [Double] = []
        others.reserveCapacity(count)
        var size = byteCount()
        for index in 0..<count {
            let context = container.newBackgroundContext()
            let post = context.fetch(Post.self, ids: [ids[Int64(index + 1)]!])[0]
            post.title = generator.updatedTitle(ofPostAt: index, generation: 1)
            let seconds = try measureSeconds { try context.save() }
            let after = byteCount()
            if after < size {
                firings.append(CheckpointFiring(saveNumber: index + 1, seconds: seconds))
            } else {
                others.append(seconds)
            }
            size = after
        }
        if let failure = container.lastAutomaticCheckpointFailure {
            throw WorkloadError("the last automatic checkpoint failed: \(failure)")
        }
        others.sort()
        return (firings, others.isEmpty ? 0 : others[others.count / 2])
    }
}
