import EventGraph
import EventGraphExamples
import Foundation

extension EventGraphEngine {
    /// A save after which the log file shrank: an automatic checkpoint had just swapped its file in.
    public struct CheckpointFiring: Sendable {
        /// The save's number among the updates (1-based): the transactions committed since the first update.
        public var saveNumber: Int
        /// How long the save took. Before automatic checkpoints left the saving thread, this save wrote the
        /// checkpoint before it returned; since, the checkpoint runs beside the saves and the swap is seen after
        /// whichever save follows it.
        public var seconds: Double
    }

    /// What the saves of ``updateTitlesWithAutomaticCheckpoints(path:generator:count:threshold:)`` took.
    public struct CheckpointedSaves: Sendable {
        /// The saves after which the log had shrunk.
        public var firings: [CheckpointFiring]
        /// The median time of the saves not in ``firings``.
        public var medianSaveSeconds: Double
        /// The 99th percentile of every save's time.
        public var p99SaveSeconds: Double
        /// The longest save (its number and time): the longest wait of any save, during a checkpoint or not.
        public var longest: CheckpointFiring
        /// The save that crossed the threshold first (save number `threshold`, the store starting compacted): it
        /// started the first checkpoint.
        public var firstTrigger: CheckpointFiring?
        /// How long the container's close took after the last save: since h48 it cancels a checkpoint still
        /// running instead of waiting for it to finish.
        public var closeSeconds: Double
    }

    /// Single-post title saves (as ``updateTitles(path:generator:count:batchSize:)`` with batches of one) in a
    /// container whose automatic checkpoint fires every `threshold` transactions; returns where it fired and what
    /// the saves took. The firing is seen from outside, through the public API only: the log file is smaller after
    /// the save than before it.
    public static func updateTitlesWithAutomaticCheckpoints(
        path: String, generator: PostGenerator, count: Int, threshold: Int
    ) throws -> CheckpointedSaves {
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
        var all: [Double] = []
        others.reserveCapacity(count)
        all.reserveCapacity(count)
        var size = byteCount()
        for index in 0..<count {
            let context = container.newBackgroundContext()
            let post = context.fetch(Post.self, ids: [ids[Int64(index + 1)]!])[0]
            post.title = generator.updatedTitle(ofPostAt: index, generation: 1)
            let seconds = try measureSeconds { try context.save() }
            all.append(seconds)
            let after = byteCount()
            if after < size {
                firings.append(CheckpointFiring(saveNumber: index + 1, seconds: seconds))
            } else {
                others.append(seconds)
            }
            size = after
        }
        // A checkpoint still running is cancelled when the container closes (it waited for it before h48).
        let closeSeconds = try measureSeconds { try container.close() }
        if let failure = container.lastAutomaticCheckpointFailure {
            throw WorkloadError("the last automatic checkpoint failed: \(failure)")
        }
        let longestIndex = all.indices.max { all[$0] < all[$1] } ?? 0
        let sorted = all.sorted()
        others.sort()
        return CheckpointedSaves(
            firings: firings, medianSaveSeconds: others.isEmpty ? 0 : others[others.count / 2],
            p99SaveSeconds: sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)],
            longest: CheckpointFiring(saveNumber: longestIndex + 1, seconds: all.isEmpty ? 0 : all[longestIndex]),
            firstTrigger: threshold <= count
                ? CheckpointFiring(saveNumber: threshold, seconds: all[threshold - 1]) : nil,
            closeSeconds: closeSeconds)
    }
}
