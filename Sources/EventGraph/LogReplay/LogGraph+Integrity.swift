import LogFormat

extension LogGraph {
    /// A violation of the model's rules found in the replayed state.
    package struct IntegrityIssue: Hashable, Sendable, CustomStringConvertible {
        /// What rule is broken.
        package enum Kind: String, Hashable, Sendable {
            case inverseMismatch = "inverse-mismatch"
            case danglingReference = "dangling-reference"
            case uniquenessViolation = "uniqueness-violation"
            case unknownEntity = "unknown-entity"
            case replayAnomaly = "replay-anomaly"
        }
        /// What rule is broken.
        package var kind: Kind
        /// A sentence naming the objects and the property involved.
        package var message: String
        package var description: String { "\(kind.rawValue): \(message)" }
    }

    /// Checks that inverses agree, that references within the store point at live objects, and that uniqueness
    /// constraints hold; also reports replay anomalies. Returns at most `limit` issues.
    package func integrityIssues(limit: Int = 100) -> [IntegrityIssue] {
        var issues = anomalies.prefix(limit).map { IntegrityIssue(kind: .replayAnomaly, message: $0) }
        guard let catalog else { return issues }
        func add(_ kind: IntegrityIssue.Kind, _ message: String) {
            if issues.count < limit { issues.append(IntegrityIssue(kind: kind, message: message)) }
        }
        func targets(_ object: ObjectReference, _ property: Int) -> [ObjectReference] {
            guard let values = objects[object], property < values.count else { return [] }
            switch values[property] {
            case .targets(let set)?: return Array(set)
            case .value(.toOne(let target?))?: return [target]
            case .value(.toMany(let list))?: return list
            default: return []
            }
        }
        // Uniqueness: per constraint, the values of its attributes within the entity and its sub-entities.
        var seenUnique: [String: ObjectReference] = [:]
        for object in objects.keys.sorted() where object.storeIndex == 0 {
            guard let entity = catalog.entity(at: object.entityIndex) else {
                add(.unknownEntity, "\(describe(object)) has entity index \(object.entityIndex), not in the schema")
                continue
            }
            for (index, property) in entity.properties.enumerated() {
                guard case .relationship(let relationship) = property else { continue }
                for target in targets(object, index) {
                    guard target.storeIndex == 0 else { continue }  // other stores are checked when attached
                    guard objects[target] != nil else {
                        add(
                            .danglingReference, "\(describe(object)).\(relationship.name) → missing \(describe(target))"
                        )
                        continue
                    }
                    guard let inverseName = relationship.inverseName,
                        let inverseIndex = catalog.propertyIndex(inverseName, inEntity: Int(target.entityIndex))
                    else { continue }
                    if !self.relationship(of: target, property: inverseIndex, contains: object) {
                        add(
                            .inverseMismatch,
                            "\(describe(object)).\(relationship.name) → \(describe(target)), but "
                                + "\(describe(target)).\(inverseName) does not point back")
                    }
                }
            }
            for constraint in entity.uniquenessConstraints {
                let indices = constraint.compactMap { catalog.propertyIndex($0, inEntity: Int(object.entityIndex)) }
                guard indices.count == constraint.count else { continue }
                let values = indices.map { value(of: object, property: $0) }
                if values.contains(where: { $0 == .attribute(.null) }) { continue }  // nulls never collide
                let root = rootEntityName(of: Int(object.entityIndex), catalog)
                let key = "\(root)|\(constraint.joined(separator: ","))|\(values)"
                if let other = seenUnique[key] {
                    add(
                        .uniquenessViolation,
                        "\(describe(object)) and \(describe(other)) share \(constraint.joined(separator: ", "))")
                } else {
                    seenUnique[key] = object
                }
            }
        }
        return issues
    }

    private func rootEntityName(of index: Int, _ catalog: SchemaCatalog) -> String {
        var current = catalog.schema.entities[index]
        while let parent = current.superentityName, let parentIndex = catalog.entityIndex(named: parent) {
            current = catalog.schema.entities[parentIndex]
        }
        return current.name
    }
}
