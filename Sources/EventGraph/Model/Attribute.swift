import LogFormat

/// Declares a persistent attribute of a ``ManagedObject`` subclass.
///
/// Reading and writing the property is plain Swift; the value lives in the object's context and store, not in
/// the wrapper. The initial value is the attribute's default.
///
/// ```swift
/// final class Post: ManagedObject {
///     @Attribute(.unique) var identity: Int64 = 0
///     @Attribute var title: String = ""
///     @Attribute var published: Date? = nil
/// }
/// ```
@propertyWrapper
public struct Attribute<Value: PersistentValue> {
    /// The value the property has before anything is assigned.
    @usableFromInline let defaultValue: Value
    /// The options, kept without an array when there is at most one: every instance of a model class runs its
    /// wrappers' initializers (inlinable, so a model class's initializer stores the values without a call per
    /// wrapper), so a fetch would otherwise allocate (and free) an array per option-bearing attribute of every object
    /// it makes.
    @usableFromInline let options: AttributeOptionList

    /// Declares an attribute whose default is the initial value.
    @inlinable
    public init(wrappedValue: Value) {
        self.defaultValue = wrappedValue
        self.options = .none
    }

    /// Declares an attribute with one option whose default is the initial value.
    @inlinable
    public init(wrappedValue: Value, _ option: AttributeOption) {
        self.defaultValue = wrappedValue
        self.options = .one(option)
    }

    /// Declares an attribute whose default is the initial value.
    @inlinable
    public init(wrappedValue: Value, _ options: AttributeOption...) {
        self.defaultValue = wrappedValue
        self.options = .many(options)
    }

    /// Declares an optional attribute whose default is `nil`.
    @inlinable
    public init() where Value: ExpressibleByNilLiteral {
        self.defaultValue = nil
        self.options = .none
    }

    /// Declares an optional attribute with one option whose default is `nil`.
    @inlinable
    public init(_ option: AttributeOption) where Value: ExpressibleByNilLiteral {
        self.defaultValue = nil
        self.options = .one(option)
    }

    /// Declares an optional attribute whose default is `nil`.
    @inlinable
    public init(_ options: AttributeOption...) where Value: ExpressibleByNilLiteral {
        self.defaultValue = nil
        self.options = .many(options)
    }

    @available(*, unavailable, message: "@Attribute is only available on ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    /// Reads and writes the value through the enclosing object.
    ///
    /// Inlinable so that each model class gets a copy specialized for its value type (no generic metadata or
    /// protocol witness calls on every property read).
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let index = PropertySlotCache.index(of: storageKeyPath, declaredIn: Object.self)
            if let stored = object.storedValue(at: index), let value = Value(storedValue: stored) {
                return value
            }
            object.recordProbedRead(wrappedKeyPath)
            return object[keyPath: storageKeyPath].defaultValue
        }
        set {
            let index = PropertySlotCache.index(of: storageKeyPath, declaredIn: Object.self)
            object.setStoredValue(newValue.storedValue, at: index)
        }
    }
}

extension Attribute: PropertyIntrospection {
    func propertySeed(name: String) -> PropertySeed {
        .attribute(
            AttributeSeed(
                name: name, type: Value.attributeType, isOptional: Value.isOptionalType,
                defaultValue: defaultValue.attributeValue, options: options.array, transformerName: nil))
    }
}

/// The options of an ``Attribute``: none, one, or an array of several.
@usableFromInline
enum AttributeOptionList {
    case none
    case one(AttributeOption)
    case many([AttributeOption])

    var array: [AttributeOption] {
        switch self {
        case .none: []
        case .one(let option): [option]
        case .many(let options): options
        }
    }
}
