import LogFormat

/// The uniqueness constraints a migration checks against the migrated state.
extension MigrationRun {
    /// The uniqueness constraints the old store did not already enforce: those a step added, or every one when an
    /// entity changed its parent (its objects join another family's constraints). Keyed by declaring entity index
    /// and ordinal.
    static func constraintsToCheck(_ changes: [MigrationChange], model: ObjectModel) -> Set<[Int]> {
        let everything = changes.contains { $0.kind == .entityParentChanged }
        var checked: Set<[Int]> = []
        for entity in model.entities {
            for (ordinal, names) in entity.uniquenessConstraints.enumerated() {
                let key = names.sorted().joined(separator: ",")
                let added = changes.contains {
                    $0.kind == .uniquenessConstraintAdded && $0.entityName == entity.name && $0.propertyName == key
                }
                if everything || added { checked.insert([entity.index, ordinal]) }
            }
        }
        return checked
    }

    /// Objects of the new state that share values under one of the `checked` uniqueness constraints.
    static func uniquenessFailures(in graph: LogGraph, model: ObjectModel, checking checked: Set<[Int]>)
        -> [EventGraphError.Failure]
    {
        guard !checked.isEmpty else { return [] }
        var holders: [UniqueKey: [ObjectReference]] = [:]
        for object in graph.objectReferences {
            let entity = model.entities[Int(object.entityIndex)]
            let constraints = entity.uniqueConstraints.filter { checked.contains([$0.entityIndex, $0.ordinal]) }
            guard !constraints.isEmpty else { continue }
            let values = entity.properties.indices.map { graph.value(of: object, property: $0) ?? .attribute(.null) }
            for constraint in constraints {
                if let key = UniqueKey(constraint, values: values) { holders[key, default: []].append(object) }
            }
        }
        var failures: [EventGraphError.Failure] = []
        for (key, objects) in holders where objects.count > 1 {
            let declaring = model.entities[key.entityIndex]
            let names = declaring.uniquenessConstraints[key.ordinal]
            let keys = objects.map(\.key).sorted().map(String.init).joined(separator: ", ")
            let shared = zip(names, key.values).map { "\($0) = \(Self.text(of: $1))" }.joined(separator: ", ")
            failures.append(
                EventGraphError.Failure(
                    entityName: declaring.name, objectID: nil, propertyName: names.joined(separator: ","),
                    message: "\(objects.count) objects (keys \(keys)) share \(shared)"))
        }
        return failures.sorted { $0.message < $1.message }
    }

    /// A value as a failure message shows it: strings quoted, numbers plain.
    private static func text(of value: AttributeValue) -> String {
        switch value {
        case .string(let text), .url(let text), .decimal(let text): "\"\(text)\""
        case .int16(let number): "\(number)"
        case .int32(let number): "\(number)"
        case .int64(let number): "\(number)"
        case .double(let number): "\(number)"
        case .float(let number): "\(number)"
        case .bool(let flag): "\(flag)"
        default: "\(value)"
        }
    }
}
