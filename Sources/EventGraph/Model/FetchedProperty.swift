public import Foundation

/// Declares a fetched property of a ``ManagedObject`` subclass: a read-only list of objects found by a fetch whose
/// predicate may refer to the object that declares it (Core Data's `$FETCH_SOURCE`).
///
/// ```swift
/// final class Teacher: Person {
///     @FetchedProperty(
///         predicate: { (teacher: Teacher) in
///             let name = teacher.name
///             return #Predicate<Course> { $0.teacherName == name }
///         },
///         sortBy: [SortDescriptor(\.title)])
///     var courses: [Course]
/// }
/// ```
/// The fetch runs on the first read, in every store that holds the target entity (possibly another store than the
/// object's), with the context's unsaved changes taken into account as any fetch does. Its result is kept until the
/// object is refreshed (``ObjectContext/refresh(_:mergeChanges:)``), a save commits in a store beneath the context
/// (any store's, not only the target's: a coarse rule that never keeps a stale result), or a child context's save
/// is pushed into it; nothing of it is saved, and it is not part of the model's hash.
///
/// Reading the property stops the program with the reason when the fetch cannot run (the store of the target's
/// configuration is not mounted); read the projected value, a `Result` (`try teacher.$courses.get()`), where that
/// can happen.
@propertyWrapper
public struct FetchedProperty<Target: ManagedObject> {
    let definition: FetchedPropertyDefinition

    /// Declares a fetched property.
    ///
    /// - Parameters:
    ///   - predicate: the objects to fetch, built from the object that declares the property (its class must be
    ///     `Source`); `nil` fetches every `Target` object.
    ///   - sortBy: the order of the result.
    public init<Source: ManagedObject>(
        predicate: @escaping @Sendable (Source) -> Predicate<Target>?, sortBy: [SortDescriptor<Target>] = []
    ) {
        definition = FetchedPropertyDefinition(destination: Target.self, sourceName: "\(Source.self)") {
            object, context throws(EventGraphError) in
            guard let source = object as? Source else {
                preconditionFailure("a fetched property of \(Source.self) was read on \(type(of: object))")
            }
            return try context.fetch(FetchDescriptor<Target>(predicate: predicate(source), sortBy: sortBy))
        }
    }

    @available(*, unavailable, message: "@FetchedProperty is only available on ManagedObject subclasses")
    public var wrappedValue: [Target] { fatalError("unreachable") }

    @available(*, unavailable, message: "@FetchedProperty is only available on ManagedObject subclasses")
    public var projectedValue: Result<[Target], EventGraphError> { fatalError("unreachable") }

    /// The fetched objects: from the cache, or fetched now.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: KeyPath<Object, [Target]>,
        storage storageKeyPath: KeyPath<Object, Self>
    ) -> [Target] {
        switch fetchedObjects(of: object, storage: storageKeyPath) {
        case .success(let objects): objects
        case .failure(let error): preconditionFailure(error.message)
        }
    }

    /// The fetched objects, or why they cannot be fetched.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        projected projectedKeyPath: KeyPath<Object, Result<[Target], EventGraphError>>,
        storage storageKeyPath: KeyPath<Object, Self>
    ) -> Result<[Target], EventGraphError> {
        fetchedObjects(of: object, storage: storageKeyPath)
    }

    private static func fetchedObjects<Object: ManagedObject>(
        of object: Object, storage storageKeyPath: KeyPath<Object, Self>
    ) -> Result<[Target], EventGraphError> {
        let name = PropertySlotCache.propertyName(of: storageKeyPath)
        return Result { () throws(EventGraphError) in
            // The model's definition is the instance's own (both come from the class's declaration).
            try object.fetchedObjects(named: name).map { fetched in
                guard let target = fetched as? Target else {
                    preconditionFailure(
                        "\(object.entity.name).\(name) fetched \(fetched), which is not a \(Target.self)")
                }
                return target
            }
        }
    }
}

extension FetchedProperty: FetchedPropertyIntrospection {
    func fetchedPropertySeed(name: String) -> FetchedPropertySeed {
        FetchedPropertySeed(name: name, definition: definition)
    }
}
