import Foundation
import LogFormat

/// The dynamic key-value API: every property by name, for tools and migrations without the application's
/// classes.
extension ManagedObject {
    /// The current value of a property (unsaved if changed, else committed); external binary values are read.
    public func value(forKey key: String) -> ObjectValue {
        let index = propertyIndex(forKey: key)
        switch entity.properties[index] {
        case .attribute:
            return .attribute(StoredValue(storedAttributeValue(at: index) ?? defaultAttributeValue(at: index)))
        case .relationship(let relationship):
            let references = (currentValue(at: index) ?? entity.defaultValues[index]).references
            let ids = requireContext(index).objectIDs(of: references)
            return relationship.isToMany ? .toMany(ids) : .toOne(ids.first)
        }
    }

    /// Sets a property: an attribute value, or relationship targets by ID (inverses are kept consistent).
    ///
    /// A programmer error when the key names no property, the value's kind does not fit it, or an ID names no
    /// object of the context's store.
    public func setValue(_ value: ObjectValue, forKey key: String) {
        let index = propertyIndex(forKey: key)
        switch (entity.properties[index], value) {
        case (.attribute(let attribute), .attribute(let storedValue)):
            let attributeValue = storedValue.attributeValue
            precondition(
                attributeValue == .null || attributeValue.fits(attribute.type.attributeType),
                "\(entity.name).\(key) is \(attribute.type); cannot store \(attributeValue.displayText)")
            setStoredAttributeValue(attributeValue, at: index)
        case (.relationship(let relationship), .toOne(let id)) where !relationship.isToMany:
            setRelationshipTargets(id.map { [resolve($0)] } ?? [], at: index)
        case (.relationship(let relationship), .toMany(let ids)) where relationship.isToMany:
            setRelationshipTargets(ids.map(resolve), at: index)
        default:
            preconditionFailure("\(entity.name).\(key) cannot take \(value)")
        }
    }

    /// The target of a to-one relationship.
    public func object(forKey key: String) -> ManagedObject? {
        relationshipTargets(at: propertyIndex(forKey: key)).first
    }

    /// The targets of a to-many relationship, in order.
    public func objects(forKey key: String) -> [ManagedObject] {
        relationshipTargets(at: propertyIndex(forKey: key))
    }

    /// Sets the targets of a relationship (one at most for a to-one).
    public func setObjects(_ targets: [ManagedObject], forKey key: String) {
        setRelationshipTargets(targets, at: propertyIndex(forKey: key))
    }

    /// The properties changed since the last save, with their new values.
    public func changedValues() -> [String: ObjectValue] {
        guard let entityStorage else { return [:] }
        var result: [String: ObjectValue] = [:]
        for entry in pending where entityStorage.isPersistentProperty[entry.index] {
            if let committed, committed.value(at: entry.index) == entry.value { continue }
            let name = entityStorage.properties[entry.index].name
            result[name] = value(forKey: name)
        }
        return result
    }

    /// The committed values of some properties (all when `keys` is `nil`), as of the row this object last read.
    public func committedValues(forKeys keys: [String]? = nil) -> [String: ObjectValue] {
        if flags.contains(.isFault) { fireFault() }
        let names = keys ?? entity.properties.filter(\.isPersistent).map(\.name)
        var result: [String: ObjectValue] = [:]
        let saved = pending
        pending = []
        for name in names { result[name] = value(forKey: name) }
        pending = saved
        return result
    }

    /// Whether an externally stored value is held in memory (it is read from the log on first access and
    /// dropped on refresh).
    public func isExternalValueLoaded(forKey key: String) -> Bool {
        isExternalValueLoaded(at: propertyIndex(forKey: key))
    }

    /// The object's context, needed to name relationship targets; a programmer error without one.
    private func requireContext(_ index: Int) -> ObjectContext {
        guard let context = contextStorage else {
            stopIfContextReleased(index)
            preconditionFailure("\(self) belongs to no context; its relationships have no IDs")
        }
        return context
    }

    private func propertyIndex(forKey key: String) -> Int {
        guard let index = entity.propertyIndexByName[key] else {
            preconditionFailure("\(entity.name) has no property named '\(key)'")
        }
        return index
    }

    private func defaultAttributeValue(at index: Int) -> AttributeValue {
        if case .attribute(let value) = entity.defaultValues[index] { return value }
        return .null
    }

    private func resolve(_ id: ObjectID) -> ManagedObject {
        guard let context, let object = context.object(with: id) else {
            if let context, context.parentStore.storeIndex(of: id.storeUUID) == nil {
                let stores = context.parentStore.storeUUIDs.map(\.uuidString).joined(separator: ", ")
                preconditionFailure("\(id) belongs to another store than \(entity.name)'s context (store \(stores))")
            }
            preconditionFailure("no object with ID \(id) in \(entity.name)'s context")
        }
        return object
    }
}

extension AttributeValue {
    /// Whether the value can be stored in an attribute of `type`.
    func fits(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.int16, .int16), (.int32, .int32), (.int64, .int64), (.double, .double), (.float, .float),
            (.bool, .bool), (.string, .string), (.date, .date), (.uuid, .uuid), (.url, .url), (.decimal, .decimal),
            (.binary, .binary), (.blob, .binary), (.blob, .transformable), (.transformable, .transformable):
            true
        default: false
        }
    }
}
