import Foundation
import LogFormat

/// Where one result sits in a ``FetchedResultsController``'s order: its section value (when sectioned), its sort
/// values, and its identity, which breaks ties so that every object has exactly one place to search for.
struct ResultsSortKey {
    var values: [AttributeValue]
    var identity: ObjectIdentity
}

/// The total order of a results controller: the section attribute first (when sectioned), then the descriptor's
/// sort attributes, then the object's identity (creation order).
///
/// The controller keeps every result's key as it was when it was placed, so that an object whose values a save
/// changed is still found where it was, by binary search, without looking at any other object.
struct FetchedResultsOrder {
    /// The attributes compared, in order, and whether each is ascending.
    let components: [(attributeIndex: Int, ascending: Bool)]
    /// Whether the first component is the section attribute.
    let isSectioned: Bool

    /// The order of `descriptor` on `entity`, sectioned by the attribute at `sectionIndex`; it throws when a sort
    /// does not name a stored attribute (its old value could not be kept).
    init<T>(_ descriptor: FetchDescriptor<T>, entity: EntityDescription, sectionIndex: Int?) throws(EventGraphError) {
        var components: [(Int, Bool)] = []
        if let sectionIndex { components.append((sectionIndex, true)) }
        for sort in descriptor.sortBy {
            guard let keyPath = sort.keyPath, let index = Self.attributeIndex(of: keyPath)
            else {
                throw EventGraphError(
                    .invalidArgument,
                    "a results controller on \(entity.name) sorts by stored attributes only; \(sort) does not name one")
            }
            components.append((index, sort.order == .forward))
        }
        for key in descriptor.sortKeys {
            guard let attribute = entity.attribute(named: key.attributeName) else {
                throw EventGraphError(
                    .invalidArgument, "\(entity.name) has no attribute '\(key.attributeName)' to sort results by")
            }
            components.append((attribute.index, key.ascending))
        }
        self.components = components
        isSectioned = sectionIndex != nil
    }

    /// The stored attribute a key path of `T` is (one it inherits too: see
    /// ``PropertyKeyPathResolver/directAttributeIndex(of:)``).
    static func attributeIndex<T: ManagedObject>(of keyPath: PartialKeyPath<T>) -> Int? {
        PropertyKeyPathResolver.directAttributeIndex(of: keyPath)
    }

    /// The key of an object as the context shows it now.
    func key(of object: ManagedObject) -> ResultsSortKey {
        ResultsSortKey(
            values: components.map { object.fetchedAttributeValue(at: $0.attributeIndex) }, identity: object.identity)
    }

    /// Whether `a` comes before `b`.
    func precedes(_ a: ResultsSortKey, _ b: ResultsSortKey) -> Bool {
        for (position, component) in components.enumerated() {
            switch a.values[position].compare(to: b.values[position]) {
            case .orderedAscending: return component.ascending
            case .orderedDescending: return !component.ascending
            case .orderedSame, nil: continue
            }
        }
        return (a.identity.storeIndex, a.identity.key) < (b.identity.storeIndex, b.identity.key)
    }

    /// Whether two section values name the same section.
    func sameSection(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        a.compare(to: b) == .orderedSame
    }

    /// Whether section value `a` comes before `b`.
    func sectionPrecedes(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        a.compare(to: b) == .orderedAscending
    }

    /// The section value in a key (the same value for every object when the results have no sections).
    func sectionValue(of key: ResultsSortKey) -> AttributeValue {
        isSectioned ? key.values[0] : .null
    }

    /// A section's name: a string value as it is, anything else as it is displayed.
    static func sectionName(_ value: AttributeValue) -> String {
        switch value {
        case .null: ""
        case .string(let text): text
        default: value.displayText
        }
    }
}
