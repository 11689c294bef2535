import LogFormat

/// Validation at save: every rule of every inserted and updated object, all failures collected.
extension ObjectContext {
    func validationFailures(of object: ManagedObject) -> [EventGraphError.Failure] {
        let entity = object.entity
        // The patterns are taken out of the context for the call: passed in place, they were a long access to the
        // context's property, and each access the closures make to the object's unsaved values was then a nested
        // access the runtime's exclusivity check searched its list for (a third of the validator's time in a bulk
        // insert's profile).
        var patterns = CompiledPatterns()
        swap(&patterns, &compiledPatterns)
        defer { swap(&patterns, &compiledPatterns) }
        var failures = entity.ruleFailures(
            patterns: &patterns, isNull: { object.pendingAttributeIsNull(at: $0) },
            value: { object.currentValue(at: $0) }
        ).map {
            EventGraphError.Failure(
                entityName: entity.name, objectID: object.objectID,
                propertyName: entity.properties[$0.propertyIndex].name,
                message: $0.message)
        }
        do {
            try object.validate()
        } catch {
            failures.append(
                EventGraphError.Failure(
                    entityName: entity.name, objectID: object.objectID, propertyName: nil, message: "\(error)"))
        }
        return failures
    }

    /// Deleted objects whose `deny` relationships still have targets.
    func denyFailures(of object: ManagedObject) -> [EventGraphError.Failure] {
        var failures: [EventGraphError.Failure] = []
        for property in object.entity.properties {
            guard let relationship = property.relationship, relationship.deleteRule == .deny else { continue }
            let targets = objects(for: object.currentValue(at: relationship.index)?.references ?? [])
                .filter { !$0.isDeleted }
            guard !targets.isEmpty else { continue }
            if let unmounted = targets.first(where: isInUnmountedStore),
                let store = unmountedStore(of: reference(to: unmounted))
            {
                failures.append(
                    EventGraphError.Failure(
                        entityName: object.entity.name, objectID: object.objectID, propertyName: relationship.name,
                        message: "cannot be deleted: its deny rule finds related object(s) in \(store), such as "
                            + "\(unmounted.objectID.uriString), which cannot be checked until that store is mounted"))
                continue
            }
            failures.append(
                EventGraphError.Failure(
                    entityName: object.entity.name, objectID: object.objectID, propertyName: relationship.name,
                    message:
                        "cannot be deleted: its deny rule finds \(targets.count) related object(s), such as \(targets[0].objectID.uriString)"
                ))
        }
        return failures
    }
}

extension AttributeValue {
    /// The value as a number, for range validation and comparisons.
    var numericValue: Double? {
        switch self {
        case .int16(let v): Double(v)
        case .int32(let v): Double(v)
        case .int64(let v): Double(v)
        case .double(let v): v
        case .float(let v): Double(v)
        case .date(let v): v
        case .decimal(let v): Double(v)
        default: nil
        }
    }

    /// Whether the value is a string whose ``length`` is surely within the bounds, told without counting its
    /// characters: a string has no more characters than UTF-8 bytes, and at least one when it is not empty.
    /// Counting walks every grapheme break of the string (`String.count`), and a bulk insert's save checked
    /// `.length(1...)` of each new post's title that way. `false` when unsure, or for other values: ``length``
    /// decides then.
    func lengthIsSurelyWithin(minimum: Int?, maximum: Int?) -> Bool {
        guard case .string(let text) = self else { return false }
        let byteCount = text.utf8.count
        return (minimum ?? 0) <= min(byteCount, 1) && byteCount <= (maximum ?? .max)
    }

    /// Characters of a string, bytes of binary data.
    var length: Int? {
        switch self {
        case .string(let v): v.count
        case .binary(let v), .transformable(let v): v.count
        case .blob(let reference): Int(clamping: reference.byteCount)  // the count comes from the log
        default: nil
        }
    }
}
