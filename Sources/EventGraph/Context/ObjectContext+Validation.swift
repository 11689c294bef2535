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
        for rule in entity.validationRules {
            let current = object.currentValue(at: rule.index) ?? entity.defaultValues[rule.index]
            if rule.isRelationship {
                let count = current.references.count
                var name: String { entity.properties[rule.index].name }
                if !rule.isToMany {
                    if rule.isRequired && count == 0 { fail(name, "is required") }
                    continue
                }
                if rule.minimumCount > 0 && count < rule.minimumCount {
                    fail(name, "has \(count) objects, fewer than the minimum \(rule.minimumCount)")
                }
                if rule.maximumCount > 0 && count > rule.maximumCount {
                    fail(name, "has \(count) objects, more than the maximum \(rule.maximumCount)")
                }
                continue
            }
            guard case .attribute(let value) = current, value != .null else {
                if rule.isRequired { fail(entity.properties[rule.index].name, "is required") }
                continue
            }
            // Only an attribute with a range, length or pattern copies its description.
            guard rule.hasValueRules, case .attribute(let attribute) = entity.properties[rule.index] else { continue }
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

/// What save-time validation checks of one property: the few fields its loop reads for every object, so that the
/// loop does not copy the property's whole description (names, defaults, options) once per object and property.
struct ValidationRule: Sendable {
    let index: Int
    let isRelationship: Bool
    /// A null attribute fails (non-optional and persistent), or an empty to-one (non-optional).
    let isRequired: Bool
    /// Whether an attribute has a range, length or pattern (checked with its description).
    let hasValueRules: Bool
    let isToMany: Bool
    /// A to-many's bounds; 0 for none.
    let minimumCount: Int
    let maximumCount: Int

    /// The rule of a property, `nil` when it has nothing to check: a value can fail only a rule it has, and a
    /// non-optional persistent attribute can be null. Every relationship is checked.
    init?(_ property: PropertyDescription) {
        switch property {
        case .attribute(let a):
            let isRequired = !a.isOptional && !a.isTransient
            let hasValueRules =
                a.minimumValue != nil || a.maximumValue != nil || a.minimumLength != nil || a.maximumLength != nil
                || a.pattern != nil
            guard isRequired || hasValueRules else { return nil }
            self.init(
                index: a.index, isRelationship: false, isRequired: isRequired, hasValueRules: hasValueRules,
                isToMany: false, minimumCount: 0, maximumCount: 0)
        case .relationship(let r):
            self.init(
                index: r.index, isRelationship: true, isRequired: !r.isOptional, hasValueRules: false,
                isToMany: r.isToMany, minimumCount: r.minimumCount, maximumCount: r.maximumCount)
        }
    }

    private init(
        index: Int, isRelationship: Bool, isRequired: Bool, hasValueRules: Bool, isToMany: Bool, minimumCount: Int,
        maximumCount: Int
    ) {
        self.index = index
        self.isRelationship = isRelationship
        self.isRequired = isRequired
        self.hasValueRules = hasValueRules
        self.isToMany = isToMany
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
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
