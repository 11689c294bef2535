import LogFormat

/// Validation at save: every rule of every inserted and updated object, all failures collected.
extension ObjectContext {
    func validationFailures(of object: ManagedObject) -> [EventGraphError.Failure] {
        let entity = object.entity
        var failures: [EventGraphError.Failure] = []
        func fail(_ property: String?, _ message: String) {
            failures.append(
                EventGraphError.Failure(
                    entityName: entity.name, objectID: object.objectID, propertyName: property, message: message))
        }
        for index in entity.validatedPropertyIndices {
            switch entity.properties[index] {
            case .attribute(let attribute):
                let value: AttributeValue
                if case .attribute(let current) = object.currentValue(at: attribute.index)
                    ?? entity.defaultValues[attribute.index]
                {
                    value = current
                } else {
                    value = .null
                }
                if value == .null {
                    if !attribute.isOptional && !attribute.isTransient { fail(attribute.name, "is required") }
                    continue
                }
                if attribute.minimumValue != nil || attribute.maximumValue != nil, let number = value.numericValue {
                    if let minimum = attribute.minimumValue, number < minimum {
                        fail(attribute.name, "is \(value.displayText), below the minimum \(minimum)")
                    }
                    if let maximum = attribute.maximumValue, number > maximum {
                        fail(attribute.name, "is \(value.displayText), above the maximum \(maximum)")
                    }
                }
                if attribute.minimumLength != nil || attribute.maximumLength != nil, let length = value.length {
                    if let minimum = attribute.minimumLength, length < minimum {
                        fail(attribute.name, "has length \(length), shorter than the minimum \(minimum)")
                    }
                    if let maximum = attribute.maximumLength, length > maximum {
                        fail(attribute.name, "has length \(length), longer than the maximum \(maximum)")
                    }
                }
                if let pattern = attribute.pattern, case .string(let text) = value {
                    do {
                        let regex = try compiledPattern(pattern)
                        if (try? regex.wholeMatch(in: text)) == nil {
                            fail(attribute.name, "'\(text)' does not match the pattern \(pattern)")
                        }
                    } catch {
                        fail(attribute.name, "the pattern \(pattern) is not a valid regular expression")
                    }
                }
            case .relationship(let relationship):
                let count = (object.currentValue(at: relationship.index) ?? entity.defaultValues[relationship.index])
                    .references.count
                if !relationship.isToMany {
                    if !relationship.isOptional && count == 0 { fail(relationship.name, "is required") }
                    continue
                }
                if relationship.minimumCount > 0 && count < relationship.minimumCount {
                    fail(relationship.name, "has \(count) objects, fewer than the minimum \(relationship.minimumCount)")
                }
                if relationship.maximumCount > 0 && count > relationship.maximumCount {
                    fail(relationship.name, "has \(count) objects, more than the maximum \(relationship.maximumCount)")
                }
            }
        }
        do {
            try object.validate()
        } catch {
            fail(nil, "\(error)")
        }
        return failures
    }

    private func compiledPattern(_ pattern: String) throws -> Regex<AnyRegexOutput> {
        if let regex = compiledPatterns[pattern] { return regex }
        let regex = try Regex(pattern)
        compiledPatterns[pattern] = regex
        return regex
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
