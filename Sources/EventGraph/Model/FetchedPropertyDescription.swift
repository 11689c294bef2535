/// A fetched property of an entity, as the model describes it (see ``FetchedProperty``).
///
/// Fetched properties are not stored: they are not in ``EntityDescription/properties``, not in the schema a log
/// records, and not part of ``ObjectModel/hash``; a model read from a log has none.
public struct FetchedPropertyDescription: Sendable, CustomStringConvertible {
    /// The property's name.
    public let name: String
    /// The entity whose objects the fetch returns (with its sub-entities'), and its index in the model.
    public let destinationEntityName: String
    public internal(set) var destinationEntityIndex: Int
    /// How the objects are fetched.
    let definition: FetchedPropertyDefinition

    public var description: String { "fetched property \(name) → \(destinationEntityName)" }
}

/// What a ``FetchedProperty`` declaration says: the target class and how to fetch for one object.
struct FetchedPropertyDefinition: Sendable {
    /// Fetches the objects for `object` in `context` (the class's own fetch, with its predicate and sort).
    typealias Fetch = @Sendable (ManagedObject, ObjectContext) throws(EventGraphError) -> [ManagedObject]

    let destination: ManagedObject.Type
    /// The class the predicate takes, for messages.
    let sourceName: String
    let fetch: Fetch
}

/// Implemented by ``FetchedProperty`` so that model registration finds fetched properties in a prototype.
protocol FetchedPropertyIntrospection {
    func fetchedPropertySeed(name: String) -> FetchedPropertySeed
}

/// What a ``FetchedProperty`` in a prototype instance says about its property.
struct FetchedPropertySeed {
    var name: String
    var definition: FetchedPropertyDefinition
}

extension ClassInfo {
    /// The fetched properties a class declares or inherits, root class first (read from a prototype once, when a
    /// model is built: they are not persistent properties and have no index).
    static func fetchedPropertySeeds(of type: ManagedObject.Type) -> [FetchedPropertySeed] {
        var levels: [[FetchedPropertySeed]] = []
        var mirror: Mirror? = Mirror(reflecting: type.init())
        while let current = mirror, current.subjectType != ManagedObject.self {
            levels.append(
                current.children.compactMap { child in
                    guard let label = child.label, let wrapper = child.value as? any FetchedPropertyIntrospection else {
                        return nil
                    }
                    return wrapper.fetchedPropertySeed(name: label.hasPrefix("_") ? String(label.dropFirst()) : label)
                })
            mirror = current.superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }
}

extension ObjectModel {
    /// Resolves the fetched properties of typed drafts into their entities: each destination must be in the model,
    /// and no name may repeat a persistent property's.
    static func resolveFetchedProperties(
        of drafts: [EntityDraft], into entities: [EntityDescription], indexByName: [String: Int]
    ) throws(EventGraphError) {
        for (draft, entity) in zip(drafts, entities) where !draft.fetchedProperties.isEmpty {
            var resolved: [FetchedPropertyDescription] = []
            for seed in draft.fetchedProperties {
                let destinationName = seed.definition.destination.entityName
                guard let destinationIndex = indexByName[destinationName],
                    entities[destinationIndex].objectClass == seed.definition.destination
                else {
                    throw EventGraphError(
                        .invalidModel,
                        "\(entity.name).\(seed.name) fetches \(destinationName) objects, but \(destinationName) is "
                            + "not part of the model; add it to the model's types")
                }
                guard entity.property(named: seed.name) == nil else {
                    throw EventGraphError(
                        .invalidModel, "\(entity.name) declares '\(seed.name)' as a property and a fetched property")
                }
                resolved.append(
                    FetchedPropertyDescription(
                        name: seed.name, destinationEntityName: destinationName,
                        destinationEntityIndex: destinationIndex, definition: seed.definition))
            }
            entity.fetchedProperties = resolved
        }
    }
}
