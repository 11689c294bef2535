import Foundation
import LogFormat
import Synchronization

extension StoreState {
    /// The canonical digest of the live state (see ``StateDigest``): the one digest of the engine, so the library's
    /// (``ModelContainer/stateDigest()``), the compaction check's and `egctl replay`'s agree by construction.
    ///
    /// Each object is hashed on its own (`EntityDigestWords`: its entity, key and properties in name order; an
    /// unordered to-many as the sum of its targets' hashes; references name stores by UUID and entities by name) and
    /// the hashes are added up (``DigestSum``). Transient attributes are not part of the state.
    ///
    /// - Parameter helperThread: as in ``digest(model:helperThread:stoppingWhen:)``.
    func digest(model: ObjectModel, helperThread: Bool = false) -> StateDigest {
        digest(model: model, helperThread: helperThread, stoppingWhen: { false })!
    }

    /// The digest as ``digest(model:)`` computes it, or `nil` once `isCancelled` returns `true` (asked before each
    /// chunk of objects is hashed): a compaction that its store's close cancels stops its digest too.
    ///
    /// - Parameter helperThread: whether a thread of the digest's own hashes chunks beside the calling thread (the
    ///   sum does not depend on which thread adds an object): for a caller that leaves a core idle meanwhile (`egctl
    ///   replay` after its replay, ``Store/stateDigest()``), not for one beside other work (compaction's digest).
    func digest(
        model: ObjectModel, helperThread: Bool = false, stoppingWhen isCancelled: () -> Bool
    ) -> StateDigest? {
        let work = DigestWork(state: self, model: model)
        guard let sum = work.sum(helperThread: helperThread, stoppingWhen: isCancelled) else { return nil }
        return sum.digest
    }

    /// Adds the live objects of one entity to `sum` as ``digest(model:)`` does. A caller that holds the state in
    /// parts (a live-state migration's windows) adds each part's objects to one sum.
    func addDigest(ofEntity entityIndex: Int, model: ObjectModel, to sum: inout DigestSum) {
        let words = EntityDigestWords(state: self, entityIndex: entityIndex, model: model)
        for chunk in 0..<words.chunkCount { words.add(chunk: chunk, to: &sum) }
    }

    /// Adds the attribute value in a slot of a column to `hasher` exactly as `DigestHasher.combine(_:)` adds the
    /// decoded ``AttributeValue``: fixed-width values from their bit pattern, binaries and ASCII text from the
    /// arena's bytes (the words a string's UTF-8 gives); other text (whose bytes decoding would repair if they were
    /// not UTF-8) and the rare values are decoded first.
    @inline(__always)
    static func combineDigest(
        of column: UnsafePointer<Column>, tag: ValueTag, at slot: Int, into hasher: inout DigestHasher
    ) {
        if tag.isFixedWidth {
            hasher.combine(fixedWidth: tag, column.pointee.words[slot])
            return
        }
        guard tag.isBytes else {
            hasher.combine(Column.attributeValueUnlessRelationship(of: column, at: slot) ?? .null)
            return
        }
        // An arena whose every byte is ASCII (the usual one) answers for all its values: none is scanned again.
        let arenaIsASCII = column.pointee.arena.isASCII
        Column.withArenaBytes(of: column, at: slot) { bytes in
            if tag == .binary || tag == .transformable || arenaIsASCII || ByteArena.isASCII(bytes) {
                hasher.combine(byteValue: tag, bytes)
            } else {
                hasher.combine(AttributeValue(bytes: tag, bytes))
            }
        }
    }
}

/// The chunks of every entity of a state, hashed into a ``DigestSum`` by the calling thread and, when asked, a helper
/// thread beside it: each takes the next chunk (an atomic counter) and adds its objects to a sum of its own; the two
/// sums are added at the end. The state is an immutable version, read with no lock.
final class DigestWork: Sendable {
    private let entities: [EntityDigestWords]
    /// Every chunk: its entity's index in ``entities`` and its own index.
    private let chunks: [(entity: Int, chunk: Int)]
    private let objectCount: Int
    private let next = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// The helper's sum once it has ended; `nil` while it runs.
    private let helperSum = ConditionLock<DigestSum?>(nil)
    private let helperChunks = Atomic<Int>(0)

    /// The least number of objects for which a helper thread is started.
    static let leastObjectCountForHelper = 2 * ColumnChunk.slotCapacity

    init(state: StoreState, model: ObjectModel) {
        let referenceWords = DigestReferenceWords(state: state, model: model)
        let entities = model.entities.indices.map {
            EntityDigestWords(state: state, entityIndex: $0, model: model, referenceWords: referenceWords)
        }
        self.entities = entities
        chunks = entities.indices.flatMap { entity in (0..<entities[entity].chunkCount).map { (entity, $0) } }
        objectCount = entities.reduce(0) { $0 + $1.objectCount }
    }

    /// The sum of every live object; `nil` once `isCancelled` returns `true` (asked before each chunk).
    func sum(helperThread: Bool, stoppingWhen isCancelled: () -> Bool) -> DigestSum? {
        let startsHelper =
            helperThread && OrderedPipeline.workerCount > 1 && objectCount >= Self.leastObjectCountForHelper
        if startsHelper {
            let thread = Thread { [self] in
                var sum = DigestSum()
                _ = addChunks(to: &sum, isHelper: true) { false }
                helperSum.withLock { $0.value = sum }
                helperSum.broadcast()
            }
            thread.name = "EventGraph digest helper"
            thread.start()
        }
        var sum = DigestSum()
        let complete = addChunks(to: &sum, stoppingWhen: isCancelled)
        if !complete { stopping.store(true, ordering: .relaxed) }
        if startsHelper {
            // The helper stops at its next chunk once `stopping` is set; it is always waited for, so none outlives
            // the digest.
            let helper = helperSum.withLock { locked in
                locked.wait(until: { $0 != nil })
                return locked.value!
            }
            sum.add(helper)
        }
        return complete ? sum : nil
    }

    /// The chunks the helper thread has hashed (for tests).
    var chunksTakenByHelper: Int { helperChunks.load(ordering: .relaxed) }

    /// Whether a helper thread was started and has ended (for tests).
    var helperHasEnded: Bool { helperSum.withLock { $0.value != nil } }

    /// Takes chunks until none is left or the digest stops; `false` when `isCancelled` returned `true`.
    private func addChunks(
        to sum: inout DigestSum, isHelper: Bool = false, stoppingWhen isCancelled: () -> Bool
    ) -> Bool {
        while true {
            if stopping.load(ordering: .relaxed) { return true }
            if isCancelled() { return false }
            let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < chunks.count else { return true }
            let (entity, chunk) = chunks[index]
            entities[entity].add(chunk: chunk, to: &sum)
            if isHelper { helperChunks.add(1, ordering: .relaxed) }
        }
    }
}
