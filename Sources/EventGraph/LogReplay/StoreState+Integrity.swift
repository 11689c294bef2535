import LogFormat

/// A violation of the model's rules found in a replayed state.
package struct IntegrityIssue: Hashable, Sendable, CustomStringConvertible {
    /// What rule is broken.
    package enum Kind: String, Hashable, Sendable {
        case inverseMismatch = "inverse-mismatch"
        case danglingReference = "dangling-reference"
        case uniquenessViolation = "uniqueness-violation"
        case replayAnomaly = "replay-anomaly"
        /// A checkpoint's stored index (format 1.4) that cannot be read or differs from the checkpoint's objects.
        case storedIndexMismatch = "stored-index-mismatch"
    }
    /// What rule is broken.
    package var kind: Kind
    /// A sentence naming the objects and the property involved.
    package var message: String
    package var description: String { "\(kind.rawValue): \(message)" }
}

extension StoreState {
    /// "Post #42", or "Post #42 in store <UUID>" for another store's object.
    func describe(_ reference: ObjectReference, model: ObjectModel) -> String {
        let index = Int(reference.entityIndex)
        let name = index < model.entities.count ? model.entities[index].name : "#\(index)"
        if let store = storeUUID(of: reference) { return "\(name) #\(reference.key) in store \(store)" }
        return "\(name) #\(reference.key)"
    }

    /// Checks that inverses agree, that references within the store point at live objects, and that uniqueness
    /// constraints hold (with the store's own tuple definition, ``UniqueKey``). Returns at most `limit` issues.
    ///
    /// Reads only what the checks need: each object's relationships and the attributes of its entity's unique
    /// constraints, and of a target, its slot (is it live?) and its inverse. Rows built whole — every string of the
    /// object and of each target, twice per reference — made `egctl verify` of a compacted 1M-post store take 19 s.
    func integrityIssues(model: ObjectModel, limit: Int) -> [IntegrityIssue] {
        var issues: [IntegrityIssue] = []
        func add(_ kind: IntegrityIssue.Kind, _ message: String) {
            if issues.count < limit { issues.append(IntegrityIssue(kind: kind, message: message)) }
        }
        func isLive(_ reference: ObjectReference) -> Bool {
            Int(reference.entityIndex) < tables.count
                && tables[Int(reference.entityIndex)].slot(forKey: reference.key) != nil
        }
        // Large to-many lists as sets, built the first time an inverse is looked up in them: a tag with 100k posts
        // is checked from each post's side in O(1), without decoding its list again.
        var largeLists: [LargeList: Set<UInt64>] = [:]
        func target(_ target: ObjectReference, property: Int, pointsBackTo object: ObjectReference) -> Bool {
            if let set = largeLists[LargeList(target: target, property: property)] { return set.contains(object.key) }
            switch tables[Int(target.entityIndex)].value(ofProperty: property, forKey: target.key) {
            case nil, .attribute: return false
            case .toOne(let back): return back?.key == object.key && back?.storeIndex == 0
            case .toMany(let list) where list.count <= 32:
                return list.contains { $0.key == object.key && $0.storeIndex == 0 }
            case .toMany(let list):
                let set = Set(list.lazy.filter { $0.storeIndex == 0 }.map(\.key))
                largeLists[LargeList(target: target, property: property)] = set
                return set.contains(object.key)
            }
        }
        var holders: [UniqueKey: ObjectReference] = [:]
        // Sized once: grown by doubling, the table of a 1M-post store's identities was rehashed a dozen times.
        holders.reserveCapacity(
            model.entities.indices.reduce(0) { count, entityIndex in
                let constraints = model.entities[entityIndex].uniqueConstraints.count
                return entityIndex < tables.count ? count + constraints * tables[entityIndex].count : count
            })
        for (entityIndex, entity) in model.entities.enumerated() where entityIndex < tables.count {
            let relationships = entity.properties.compactMap(\.relationship)
            let constraints = entity.uniqueConstraints
            guard !relationships.isEmpty || !constraints.isEmpty else { continue }
            tables[entityIndex].forEachLiveSlot { chunk, position, _ in
                let object = ObjectReference(entityIndex: UInt32(entityIndex), key: chunk.keys[position])
                let valueCount = Int(chunk.valueCounts[position])
                for relationship in relationships where relationship.index < valueCount {
                    guard let value = chunk.columns[relationship.index].value(at: position) else { continue }
                    for reference in value.references where reference.storeIndex == 0 {
                        // References into other stores are checked when those are attached.
                        guard isLive(reference) else {
                            add(
                                .danglingReference,
                                "\(describe(object, model: model)).\(relationship.name) → missing "
                                    + describe(reference, model: model))
                            continue
                        }
                        guard let inverseIndex = relationship.inverseIndex, let inverseName = relationship.inverseName
                        else { continue }
                        if !target(reference, property: inverseIndex, pointsBackTo: object) {
                            add(
                                .inverseMismatch,
                                "\(describe(object, model: model)).\(relationship.name) → "
                                    + "\(describe(reference, model: model)), but "
                                    + "\(describe(reference, model: model)).\(inverseName) does not point back")
                        }
                    }
                }
                for constraint in constraints {
                    // A tuple with a null value (or a value the row lacks) holds nothing, as nulls never are equal.
                    let values = constraint.propertyIndices.map { chunk.attributeValue(at: position, property: $0) }
                    guard !values.contains(.null), constraint.propertyIndices.allSatisfy({ $0 < valueCount }) else {
                        continue
                    }
                    let tuple = UniqueKey(
                        entityIndex: constraint.entityIndex, ordinal: constraint.ordinal, values: values)
                    if let other = holders.updateValue(object, forKey: tuple) {
                        add(
                            .uniquenessViolation,
                            "\(describe(object, model: model)) and \(describe(other, model: model)) share "
                                + constraint.propertyNames.joined(separator: ", "))
                    }
                }
            }
        }
        return issues
    }
}

/// A target's to-many list that the integrity check keeps as a set (see `StoreState.integrityIssues`).
private struct LargeList: Hashable {
    var target: ObjectReference
    var property: Int
}
