import LogFormat

/// Makes a changeset keep both sides of every relationship in agreement with the committed state it is applied to.
///
/// A context records both sides of each relationship change, but against the rows *it* read. When the store's
/// rows moved on meanwhile — find-or-create turned an insert into an update of an object another context created,
/// or a merge policy kept one side of a conflicting change — the other side no longer matches: a post's author is
/// author 2 while author 1 still lists it. So the store decides each touched relationship *edge* (object, property,
/// target) once, from what the changeset says about either side, and adds the operations that write the decision
/// to both sides.
///
/// The rules, per edge:
/// 1. An edge to an object that does not exist after the changeset (deleted, or never saved) is absent.
/// 2. A to-one side the changeset sets (or that a `storeWins` merge kept) is authoritative: the edge is present
///    exactly when that side points at the other object. (Both sides to-one and contradicting: present.)
/// 3. Otherwise the to-many sides' additions and removals decide, an addition over a removal.
/// 4. A to-one side keeps at most one edge: the one it was set to, else the last edge the changeset added to it,
///    else its current target; every other edge of that side is removed from its other side too.
///
/// Work is proportional to the changeset (to-many lists are never diffed, except an ordered list replaced whole),
/// so a save that adds one post to an author with 100,000 posts stays cheap.
struct InverseRepair {
    /// One side of an edge: an object and one of its relationships.
    struct Slot: Hashable {
        var key: UInt64
        var property: Int
    }

    /// What a changeset says about an edge from one side.
    enum Vote {
        case none, weakPresent, weakAbsent, strongPresent, strongAbsent
        var isStrong: Bool { self == .strongPresent || self == .strongAbsent }
        var isWeak: Bool { self == .weakPresent || self == .weakAbsent }
    }

    /// A relationship edge between two slots (in a fixed order so each edge has one entry), with the votes of the
    /// two sides and the decision.
    struct Edge {
        var a: Slot
        var b: Slot
        var voteA = Vote.none
        var voteB = Vote.none
        var isPresent = false
    }

    private let model: ObjectModel
    /// The committed state and the saves queued before this one: together, the rows the changeset applies to.
    private let state: StoreState
    private let queue: CommitQueue
    /// A reference (with its entity) for each key met.
    private var references: [UInt64: ObjectReference] = [:]
    private var inserted: Set<UInt64> = []
    private var deleted: Set<UInt64> = []
    private var existence: [UInt64: Bool] = [:]
    /// The target each to-one slot holds after the changeset's own operations.
    private var toOneValues: [Slot: ObjectReference?] = [:]
    /// To-one slots the changeset sets, or that a merge kept at the store's value.
    private var authoritative: Set<Slot> = []
    private var edges: [Edge] = []
    /// The position of each edge in `edges`, by its two slots in order.
    private var edgeIndex: [EdgeKey: Int] = [:]

    private struct EdgeKey: Hashable {
        var a: Slot
        var b: Slot
    }

    init(model: ObjectModel, state: StoreState, queue: CommitQueue) {
        self.model = model
        self.state = state
        self.queue = queue
    }

    /// Whether any relationship of the model has an inverse (otherwise there is nothing to repair).
    static func isNeeded(for model: ObjectModel) -> Bool {
        model.entities.contains { entity in
            entity.properties.contains { $0.relationship?.inverseIndex != nil }
        }
    }

    /// The operations to append to `operations` so that both sides of every edge they touch agree; `pinned` are
    /// to-one slots a `storeWins` merge kept at the store's value.
    mutating func repairs(for operations: [ChangeOperation], pinned: Set<Slot>) -> [ChangeOperation] {
        for operation in operations { record(operation) }
        for slot in pinned where isToOne(slot) {
            authoritative.insert(slot)
            let value = currentToOne(slot)
            toOneValues[slot] = value
            if let reference = references[slot.key], let value { vote(reference, slot.property, value, .strongPresent) }
        }
        guard !edges.isEmpty else { return [] }
        for position in edges.indices { edges[position].isPresent = decide(edges[position]) }
        let finalToOne = settleToOneSlots()
        return writes(finalToOne)
    }

    // MARK: - Votes

    private mutating func record(_ operation: ChangeOperation) {
        switch operation {
        case .insert(let object, let changes):
            note(object)
            inserted.insert(object.key)
            existence[object.key] = true
            for change in changes { recordSet(object, Int(change.propertyIndex), change.value, isInsert: true) }
        case .update(let object, let changes):
            note(object)
            for change in changes { recordSet(object, Int(change.propertyIndex), change.value, isInsert: false) }
        case .relate(let object, let property, let added, let removed):
            note(object)
            for target in added { vote(object, Int(property), target, .weakPresent) }
            for target in removed { vote(object, Int(property), target, .weakAbsent) }
        case .delete(let object):
            note(object)
            deleted.insert(object.key)
            existence[object.key] = false
            recordDelete(object)
        }
    }

    private mutating func recordSet(_ object: ObjectReference, _ property: Int, _ value: PropertyValue, isInsert: Bool)
    {
        guard relationship(object, property)?.inverseIndex != nil else { return }
        let slot = Slot(key: object.key, property: property)
        switch value {
        case .attribute:
            return
        case .toOne(let target):
            let before = isInsert ? nil : (toOneValues[slot] ?? currentToOne(slot))
            if let before, before.key != target?.key { vote(object, property, before, .strongAbsent) }
            if let target { vote(object, property, target, .strongPresent) }
            toOneValues[slot] = target
            authoritative.insert(slot)
        case .toMany(let targets):
            // A to-many list replaced whole (an insert, or an ordered list reordered): diff it with the committed one.
            var old: [ObjectReference] = []
            if !isInsert, case .toMany(let list)? = currentRow(object)?.values[property] { old = list }
            if old.isEmpty {
                // Every target is added (an insert's list): no sets to build (two per inserted object and list).
                for target in targets { vote(object, property, target, .weakPresent) }
                return
            }
            let newKeys = Set(targets.map(\.key))
            let oldKeys = Set(old.map(\.key))
            for target in targets where !oldKeys.contains(target.key) { vote(object, property, target, .weakPresent) }
            for target in old where !newKeys.contains(target.key) { vote(object, property, target, .weakAbsent) }
        }
    }

    /// A deleted object leaves every edge it had; `noAction` relationships are left to the application, as their
    /// rule says.
    private mutating func recordDelete(_ object: ObjectReference) {
        guard let row = currentRow(object) else { return }
        let entity = model.entities[Int(object.entityIndex)]
        for property in entity.properties {
            guard let relationship = property.relationship, relationship.inverseIndex != nil,
                relationship.deleteRule != .noAction
            else { continue }
            for target in row.values[relationship.index].references {
                vote(object, relationship.index, target, .strongAbsent)
            }
        }
    }

    private mutating func vote(_ object: ObjectReference, _ property: Int, _ target: ObjectReference, _ vote: Vote) {
        guard target.storeIndex == 0, let inverse = relationship(object, property)?.inverseIndex else { return }
        note(target)
        let mine = Slot(key: object.key, property: property)
        let theirs = Slot(key: target.key, property: inverse)
        let position = edge(mine, theirs)
        if edges[position].a == mine { edges[position].voteA = merged(edges[position].voteA, vote) }
        if edges[position].b == mine { edges[position].voteB = merged(edges[position].voteB, vote) }
    }

    /// A later vote of one side replaces an earlier one, except that a strong vote outranks a weak one.
    private func merged(_ old: Vote, _ new: Vote) -> Vote {
        old.isStrong && new.isWeak ? old : new
    }

    private mutating func edge(_ first: Slot, _ second: Slot) -> Int {
        let isOrdered = (first.key, first.property) <= (second.key, second.property)
        let key = isOrdered ? EdgeKey(a: first, b: second) : EdgeKey(a: second, b: first)
        if let position = edgeIndex[key] { return position }
        edges.append(Edge(a: key.a, b: key.b))
        edgeIndex[key] = edges.count - 1
        return edges.count - 1
    }

    // MARK: - Decisions

    private mutating func decide(_ edge: Edge) -> Bool {
        guard exists(edge.a.key), exists(edge.b.key) else { return false }
        // The two votes compared in place (an array of them would be an allocation per edge of a bulk insert).
        let (first, second) = (edge.voteA, edge.voteB)
        if first.isStrong || second.isStrong { return first == .strongPresent || second == .strongPresent }
        if first.isWeak || second.isWeak { return first == .weakPresent || second == .weakPresent }
        return false
    }

    /// Rule 4: picks each to-one slot's one edge and removes the others (from both sides). Returns the target of
    /// every to-one slot that an edge touches.
    private mutating func settleToOneSlots() -> [Slot: ObjectReference?] {
        // The edges of each to-one slot: only those are settled and read here (a list per to-many slot, say each
        // post's tags in a bulk insert, would be built for nothing).
        var incident: [Slot: [Int]] = [:]
        var pending: [Slot] = []
        for (position, edge) in edges.enumerated() {
            if isToOne(edge.a) {
                incident[edge.a, default: []].append(position)
                pending.append(edge.a)
            }
            if isToOne(edge.b) {
                if edge.b != edge.a { incident[edge.b, default: []].append(position) }
                pending.append(edge.b)
            }
        }
        var winners: [Slot: UInt64] = [:]
        var settled: Set<Slot> = []
        while let slot = pending.popLast() {
            guard settled.insert(slot).inserted else { continue }
            let edgesOfSlot = incident[slot] ?? []
            let present = edgesOfSlot.filter { edges[$0].isPresent }
            let current = toOneValues[slot] ?? currentToOne(slot)
            let winner: UInt64?
            if authoritative.contains(slot) {
                winner = present.contains { other(of: edges[$0], slot).key == current?.key } ? current?.key : nil
            } else if let last = present.last {
                winner = other(of: edges[last], slot).key
            } else if let current, !edgesOfSlot.contains(where: { other(of: edges[$0], slot).key == current.key }) {
                winner = current.key  // no edge of the slot was touched: it keeps its target
            } else {
                winner = nil
            }
            winners[slot] = winner
            for position in present where other(of: edges[position], slot).key != winner {
                edges[position].isPresent = false
            }
            // The target the slot held loses it unless it won (its side must let go too).
            guard let current, current.key != winner, current.storeIndex == 0,
                let inverse = relationship(reference(slot), slot.property)?.inverseIndex
            else { continue }
            note(current)
            let position = edge(slot, Slot(key: current.key, property: inverse))
            edges[position].isPresent = false
            let far = other(of: edges[position], slot)
            for end in Set([slot, far]) where isToOne(end) && !(incident[end] ?? []).contains(position) {
                incident[end, default: []].append(position)
            }
            if isToOne(far) { pending.append(far) }
        }
        var targets: [Slot: ObjectReference?] = [:]
        for slot in settled {
            var target: ObjectReference?
            if let key = winners[slot] {
                // Kept unless the other side's settling removed the edge.
                let edge = (incident[slot] ?? []).first { other(of: edges[$0], slot).key == key }
                if edge.map({ edges[$0].isPresent }) ?? true { target = references[key] }
            }
            targets[slot] = .some(target)  // `nil` is a decision too: the slot is emptied
        }
        return targets
    }

    // MARK: - Writing the decisions

    private mutating func writes(_ toOne: [Slot: ObjectReference?]) -> [ChangeOperation] {
        var operations: [ChangeOperation] = []
        for (slot, target) in toOne.sorted(by: { ($0.key.key, $0.key.property) < ($1.key.key, $1.key.property) }) {
            guard exists(slot.key) else { continue }
            let held = toOneValues[slot] ?? currentToOne(slot)
            guard held?.key != target?.key else { continue }
            operations.append(
                .update(reference(slot), [PropertyChange(propertyIndex: UInt32(slot.property), value: .toOne(target))]))
        }
        var added: [Slot: [ObjectReference]] = [:]
        var removed: [Slot: [ObjectReference]] = [:]
        var order: [Slot] = []
        func write(_ edge: Edge, side slot: Slot, vote: Vote, target: Slot) {
            guard !isToOne(slot), exists(slot.key) else { return }
            guard vote != (edge.isPresent ? Vote.weakPresent : .weakAbsent) else { return }
            if added[slot] == nil && removed[slot] == nil { order.append(slot) }
            if edge.isPresent {
                added[slot, default: []].append(reference(target))
            } else {
                removed[slot, default: []].append(reference(target))
            }
        }
        for edge in edges {
            write(edge, side: edge.a, vote: edge.voteA, target: edge.b)
            write(edge, side: edge.b, vote: edge.voteB, target: edge.a)
        }
        for slot in order {
            operations.append(
                .relate(
                    reference(slot), propertyIndex: UInt32(slot.property), added: added[slot] ?? [],
                    removed: removed[slot] ?? []))
        }
        return operations
    }

    // MARK: - Helpers

    private mutating func note(_ object: ObjectReference) {
        if references[object.key] == nil { references[object.key] = object }
    }

    private func reference(_ slot: Slot) -> ObjectReference { references[slot.key]! }

    private func other(of edge: Edge, _ slot: Slot) -> Slot { edge.a == slot ? edge.b : edge.a }

    private func relationship(_ object: ObjectReference, _ property: Int) -> RelationshipDescription? {
        Self.relationship(object, property, in: model)
    }

    /// The relationship of an object of this store, `nil` for an attribute or an object of another store.
    private static func relationship(_ object: ObjectReference, _ property: Int, in model: ObjectModel)
        -> RelationshipDescription?
    {
        let entityIndex = Int(object.entityIndex)
        guard object.storeIndex == 0, entityIndex < model.entities.count,
            property < model.entities[entityIndex].properties.count
        else { return nil }
        return model.entities[entityIndex].properties[property].relationship
    }

    private func isToOne(_ slot: Slot) -> Bool {
        guard let object = references[slot.key], let relationship = relationship(object, slot.property) else {
            return false
        }
        return !relationship.isToMany
    }

    private func currentRow(_ object: ObjectReference) -> Row? {
        queue.row(entityIndex: Int(object.entityIndex), key: object.key, in: state)
    }

    private func currentToOne(_ slot: Slot) -> ObjectReference? {
        guard let object = references[slot.key], case .toOne(let target)? = currentRow(object)?.values[slot.property]
        else { return nil }
        return target
    }

    private mutating func exists(_ key: UInt64) -> Bool {
        if let known = existence[key] { return known }
        let found = references[key].map { currentRow($0) != nil } ?? false
        existence[key] = found
        return found
    }
}
