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
    func integrityIssues(model: ObjectModel, limit: Int) -> [IntegrityIssue] {
        var issues: [IntegrityIssue] = []
        func add(_ kind: IntegrityIssue.Kind, _ message: String) {
            if issues.count < limit { issues.append(IntegrityIssue(kind: kind, message: message)) }
        }
        // Large to-many lists as sets, built the first time an inverse is looked up in them: a tag with 100k posts
        // is checked from each post's side in O(1).
        var largeLists: [ObjectReference: [Int: Set<UInt64>]] = [:]
        func target(_ target: ObjectReference, property: Int, pointsBackTo object: ObjectReference) -> Bool {
            guard let row = row(entityIndex: Int(target.entityIndex), key: target.key), property < row.values.count
            else { return false }
            switch row.values[property] {
            case .attribute: return false
            case .toOne(let back): return back?.key == object.key && back?.storeIndex == 0
            case .toMany(let list) where list.count <= 32:
                return list.contains { $0.key == object.key && $0.storeIndex == 0 }
            case .toMany(let list):
                if let set = largeLists[target]?[property] { return set.contains(object.key) }
                let set = Set(list.lazy.filter { $0.storeIndex == 0 }.map(\.key))
                largeLists[target, default: [:]][property] = set
                return set.contains(object.key)
            }
        }
        var holders: [UniqueKey: ObjectReference] = [:]
        for (entityIndex, entity) in model.entities.enumerated() {
            let relationships = entity.properties.compactMap(\.relationship)
            forEachRow(ofEntity: entityIndex) { row in
                let object = row.reference
                for relationship in relationships {
                    for reference in row.values[relationship.index].references where reference.storeIndex == 0 {
                        // References into other stores are checked when those are attached.
                        guard Int(reference.entityIndex) < tables.count,
                            self.row(entityIndex: Int(reference.entityIndex), key: reference.key) != nil
                        else {
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
                for constraint in entity.uniqueConstraints {
                    guard let tuple = UniqueKey(constraint, values: row.values) else { continue }
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
