import LogFormat

// MARK: - A save of new objects only

extension InverseRepair {
    /// The longest list of targets the check scans to find the other side of one edge. A longer list (a tag's list
    /// of every post) is not scanned: its edges are proven from the other side, whose lists are short (a post's
    /// tags); when both sides of an edge are long lists, the check gives up and the edge table decides.
    static let consistentInsertionScanLimit = 32

    /// Whether a changeset of inserts only writes every relationship edge on both of its sides, between objects it
    /// inserts: then the repair adds nothing, which this proves without the edge table (a bulk insert's objects are
    /// all new, and the context wrote both sides of each of their edges).
    ///
    /// Why nothing is added then: every edge is voted present by both sides (rule 3, or rule 2 for a to-one side);
    /// a to-one side's only voted edge is the one it was set to, since every edge of that slot was voted by the slot
    /// itself, so rule 4 keeps it and removes nothing; and each side already holds what the decision writes. Any
    /// other shape (an update, a relate, a delete, a target not inserted here, an edge written on one side only, an
    /// object related to itself through its own inverse, an object that sets a property twice or out of order)
    /// returns `false`, and the edge table decides.
    ///
    /// How, without sorting or hashing the edges: every target in an inserted object's relationship list (an
    /// *element*) is one side's vote for an edge. An element is proven when the target's inverse, which the same
    /// changeset inserts, holds the object back: a to-one inverse is compared, a to-many inverse of at most
    /// ``consistentInsertionScanLimit`` targets is scanned, and the matching element there is proven too (it is the
    /// other side's vote for the same edge). An element whose target's list is too long to scan waits to be proven
    /// from that list's side. The insertion is consistent when every element is proven. Work: one lookup of the
    /// target per element, and scans of short lists only.
    static func isConsistentInsertion(_ operations: [ChangeOperation], model: ObjectModel) -> Bool {
        // The position of each inserted object's operation, and a number for each element: elements of one change
        // are numbered consecutively from `elementStarts[firstChange[operation] + change]`.
        var positions: [UInt64: Int] = [:]
        positions.reserveCapacity(operations.count)
        var firstChange: [Int] = []
        firstChange.reserveCapacity(operations.count)
        var elementStarts: [Int] = []
        var elementCount = 0
        for (position, operation) in operations.enumerated() {
            guard case .insert(let object, let changes) = operation else { return false }
            guard positions.updateValue(position, forKey: object.key) == nil else { return false }
            firstChange.append(elementStarts.count)
            var previous = -1
            for change in changes {
                // Strictly increasing: a property set twice would let a replaced list's edges pass, and the order
                // lets the other side's change be found by a binary search.
                guard Int(change.propertyIndex) > previous else { return false }
                previous = Int(change.propertyIndex)
                elementStarts.append(elementCount)
                switch change.value {
                case .attribute, .toOne(nil): break
                case .toOne: elementCount += 1
                case .toMany(let targets): elementCount += targets.count
                }
            }
        }
        guard elementCount > 0 else { return true }
        var isProven = [Bool](repeating: false, count: elementCount)

        /// Proves one element (`object`'s vote, through `property`, for the edge to `target`) from the target's
        /// side; `false` when the target's side contradicts it.
        func prove(_ object: ObjectReference, _ property: Int, _ target: ObjectReference, inverse: Int, _ element: Int)
            -> Bool
        {
            guard target.storeIndex == 0 else {
                isProven[element] = true  // not repaired (see `vote`)
                return true
            }
            guard target.key != object.key || inverse != property else { return false }
            guard let targetPosition = positions[target.key],
                case .insert(let targetReference, let targetChanges) = operations[targetPosition],
                relationship(targetReference, inverse, in: model)?.inverseIndex == property,
                let offset = changeOffset(of: inverse, in: targetChanges)
            else { return false }
            let targetElement = elementStarts[firstChange[targetPosition] + offset]
            switch targetChanges[offset].value {
            case .toOne(let back?):
                guard back.storeIndex == 0, back.key == object.key else { return false }
                isProven[targetElement] = true
            case .toMany(let backs):
                // A long list is left to be proven from the other side, element by element.
                guard backs.count <= consistentInsertionScanLimit else { return true }
                guard let index = backs.firstIndex(where: { $0.storeIndex == 0 && $0.key == object.key }) else {
                    return false
                }
                isProven[targetElement + index] = true
            case .attribute, .toOne(nil):
                return false
            }
            isProven[element] = true
            return true
        }

        for (position, operation) in operations.enumerated() {
            guard case .insert(let object, let changes) = operation else { return false }
            for (offset, change) in changes.enumerated() {
                let element = elementStarts[firstChange[position] + offset]
                let property = Int(change.propertyIndex)
                guard let inverse = relationship(object, property, in: model)?.inverseIndex else {
                    // No inverse to keep: its targets are no votes.
                    let count = change.value.references.count
                    for index in element..<element + count { isProven[index] = true }
                    continue
                }
                switch change.value {
                case .attribute, .toOne(nil):
                    continue
                case .toOne(let target?):
                    guard prove(object, property, target, inverse: inverse, element) else { return false }
                case .toMany(let targets):
                    for (index, target) in targets.enumerated() {
                        guard prove(object, property, target, inverse: inverse, element + index) else { return false }
                    }
                }
            }
        }
        return !isProven.contains(false)
    }

    /// The position of the change of `property` in changes sorted by strictly increasing property index.
    private static func changeOffset(of property: Int, in changes: [PropertyChange]) -> Int? {
        var low = 0
        var high = changes.count
        while low < high {
            let middle = (low + high) / 2
            let index = Int(changes[middle].propertyIndex)
            if index == property { return middle }
            if index < property { low = middle + 1 } else { high = middle }
        }
        return nil
    }
}
