import LogFormat

/// A save of new objects only: whether its inserts already write both sides of every relationship edge, proven
/// with one sorted array of votes instead of the repair's edge table (see ``InverseRepair``).
extension InverseRepair {
    /// One side's vote for an edge, packed into two words so that sorting the votes of a bulk insert moves 16 bytes
    /// and compares two integers per step (five fields of 40 bytes took 6 % of a bulk insert's CPU): `high` is the
    /// edge's first slot (`aKey << 16 | aProperty`), `low` its second slot and the side that voted (`bKey << 17 |
    /// bProperty << 1 | side`; side 0 when slot `a`'s object voted, 1 when slot `b`'s did). Slot `a` is the smaller
    /// of the two (key, property) pairs, so the word order is the pair order.
    struct SideVote: Comparable {
        var high: UInt64
        var low: UInt64

        /// The largest key a packed vote holds; a changeset with a larger one goes to the edge table.
        static let maxKey: UInt64 = (1 << 47) - 1

        /// The vote of `voter`'s slot for the edge to `target`'s slot.
        ///
        /// - Precondition: both keys are at most ``maxKey``, both properties below 2^16, and the slots differ.
        init(voter: (key: UInt64, property: Int), target: (key: UInt64, property: Int)) {
            let voterIsA = voter < target
            let (a, b) = voterIsA ? (voter, target) : (target, voter)
            high = a.key << 16 | UInt64(a.property)
            low = b.key << 17 | UInt64(b.property) << 1 | (voterIsA ? 0 : 1)
        }

        /// The edge without the side: equal for both sides' votes of one edge.
        var edge: (UInt64, UInt64) { (high, low >> 1) }
        var side: UInt64 { low & 1 }

        static func < (lhs: SideVote, rhs: SideVote) -> Bool {
            lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
        }
    }

    /// Whether a changeset of inserts only writes every relationship edge on both of its sides, between objects it
    /// inserts: then the repair adds nothing, which this proves with one sorted array of votes instead of the edge
    /// table (a bulk insert's objects are all new, and the context wrote both sides of each of their edges).
    ///
    /// Why nothing is added then: every edge is voted present by both sides (rule 3, or rule 2 for a to-one side);
    /// a to-one side's only voted edge is the one it was set to, since every edge of that slot was voted by the slot
    /// itself, so rule 4 keeps it and removes nothing; and each side already holds what the decision writes. Any
    /// other shape (an update, a relate, a delete, a target not inserted here, an edge written on one side only, an
    /// object related to itself through its own inverse, a key above ``SideVote/maxKey``) returns `false`, and the
    /// edge table decides. Only inserted objects vote, so an edge with both sides' votes joins two inserted objects.
    static func isConsistentInsertion(_ operations: [ChangeOperation], model: ObjectModel) -> Bool {
        var inserted: Set<UInt64> = []
        inserted.reserveCapacity(operations.count)
        var votes = InsertionVotes()
        for operation in operations {
            guard case .insert(let object, let changes) = operation, inserted.insert(object.key).inserted,
                votes.record(object, changes, model: model)
            else { return false }
        }
        return votes.areConsistent()
    }

    /// The votes of a changeset of inserts for its relationship edges, recorded insert by insert (by
    /// ``isConsistentInsertion(_:model:)``, or by a pass that stages the inserts at the same time), then checked
    /// once: every edge must have both sides' votes. The caller makes sure no object is inserted twice.
    struct InsertionVotes {
        private var votes: [SideVote] = []

        /// Records an insert's votes; `false` when the insert has a shape the votes cannot prove (see
        /// ``isConsistentInsertion(_:model:)``): the changeset then goes to the edge table.
        mutating func record(_ object: ObjectReference, _ changes: [PropertyChange], model: ObjectModel) -> Bool {
            guard object.storeIndex == 0, Int(object.entityIndex) < model.entities.count,
                object.key <= SideVote.maxKey
            else { return false }
            let links = model.entities[Int(object.entityIndex)].relationshipLinks
            // By position, not `for change in changes`: an attribute's change (a post's body) is skipped on its
            // index, without copying (retaining) its value.
            for position in changes.indices {
                let property = Int(changes[position].propertyIndex)
                guard property < links.count, let inverse = links[property]?.inverseIndex else { continue }
                switch changes[position].value {
                case .attribute, .toOne(nil): continue
                case .toOne(let target?):
                    guard vote(object.key, property, target, inverse: inverse) else { return false }
                case .toMany(let targets):
                    for target in targets {
                        guard vote(object.key, property, target, inverse: inverse) else { return false }
                    }
                }
            }
            return true
        }

        private mutating func vote(_ key: UInt64, _ property: Int, _ target: ObjectReference, inverse: Int) -> Bool {
            guard target.storeIndex == 0 else { return true }  // not repaired (see `vote`)
            let mine = (key: key, property: property)
            let theirs = (key: target.key, property: inverse)
            guard mine != theirs, target.key <= SideVote.maxKey else { return false }
            votes.append(SideVote(voter: mine, target: theirs))
            return true
        }

        /// Whether every recorded edge has both sides' votes.
        mutating func areConsistent() -> Bool {
            guard !votes.isEmpty else { return true }
            Self.groupByEdge(&votes)
            // Each edge's votes are adjacent, side 0's first: it needs both.
            return votes.withUnsafeBufferPointer { votes in
                var start = 0
                while start < votes.count {
                    let edge = votes[start].edge
                    var end = start + 1
                    while end < votes.count && votes[end].edge == edge { end += 1 }
                    guard votes[start].side == 0, votes[end - 1].side == 1 else { return false }
                    start = end
                }
                return true
            }
        }

        /// Orders votes so that each edge's votes are adjacent, side 0's first (what sorting them does, which the
        /// check needs, without the order between edges).
        ///
        /// A counting sort by the edge's second key (slot `b`'s, the larger), then a sort of each key's votes: the
        /// votes of a bulk insert sort in a third of the time (sorting them all was 4 % of its CPU). A second key is
        /// the larger object of its edges, so its votes are few (a post's author and tags) unless an object lists
        /// many objects inserted before it. Keys spread wider than 4 counters per vote, and 64 votes or fewer, are
        /// sorted as before.
        static func groupByEdge(_ votes: inout [SideVote]) {
            let count = votes.count
            // A few votes (a save of one object) sort in place, without the counters' and the copy's allocations.
            guard count > 64 else { return votes.sort() }
            var (smallest, largest) = (UInt64.max, UInt64.min)
            for vote in votes {
                let key = vote.low >> 17
                smallest = min(smallest, key)
                largest = max(largest, key)
            }
            // Both at most `maxKey` (2^47 - 1): no overflow. `count` is at most `Int32.max` for the counters.
            let span = largest - smallest
            guard count < Int(Int32.max), span < UInt64(count) * 4 + 64 else {
                votes.sort()
                return
            }
            let bucketCount = Int(span) + 1
            // starts[b] is where bucket b begins; starts[bucketCount] is the end.
            var starts = [Int32](repeating: 0, count: bucketCount + 1)
            starts.withUnsafeMutableBufferPointer { starts in
                for vote in votes { starts[Int((vote.low >> 17) - smallest) + 1] += 1 }
                for bucket in 0..<bucketCount { starts[bucket + 1] += starts[bucket] }
            }
            let grouped = [SideVote](unsafeUninitializedCapacity: count) { buffer, initialized in
                var next = starts
                next.withUnsafeMutableBufferPointer { next in
                    for vote in votes {
                        let bucket = Int((vote.low >> 17) - smallest)
                        (buffer.baseAddress! + Int(next[bucket])).initialize(to: vote)
                        next[bucket] += 1
                    }
                }
                initialized = count
            }
            votes = grouped
            votes.withUnsafeMutableBufferPointer { votes in
                for bucket in 0..<bucketCount {
                    let (start, end) = (Int(starts[bucket]), Int(starts[bucket + 1]))
                    guard end - start > 1 else { continue }
                    guard end - start <= 32 else {
                        votes[start..<end].sort()
                        continue
                    }
                    // Insertion sort: a post's few votes.
                    for position in (start + 1)..<end {
                        let vote = votes[position]
                        var place = position
                        while place > start && vote < votes[place - 1] {
                            votes[place] = votes[place - 1]
                            place -= 1
                        }
                        votes[place] = vote
                    }
                }
            }
        }
    }
}
