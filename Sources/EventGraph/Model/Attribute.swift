import LogFormat

/// Declares a persistent attribute of a ``ManagedObject`` subclass.
///
/// Reading and writing the property is plain Swift; the value lives in the object's context and store, not in
/// the wrapper. The initial value is the attribute's default, which the model records once for the entity (the
/// wrapper keeps neither it nor the options, so an object costs nothing per attribute). A default computed anew for
/// each object (`Date()`, `UUID()`) is computed for an object when it is inserted, or when it is read before that,
/// and kept from then on.
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
    /// 0 in every instance but a prototype: the default value and the options live once per entity, in the model
    /// (see `PrototypeCapture`), so a fetched object initializes and releases nothing per attribute. In a prototype
    /// that ``ObjectModel`` builds, the number of this declaration in the prototype's record.
    @usableFromInline let declarationTag: UInt16

    /// Declares an attribute whose default is the initial value.
    @inlinable
    public init(wrappedValue: Value) {
        declarationTag =
            PrototypeCapture.isActive ? PrototypeCapture.attributeTag(defaultValue: wrappedValue, options: []) : 0
    }

    /// Declares an attribute with one option whose default is the initial value.
    @inlinable
    public init(wrappedValue: Value, _ option: AttributeOption) {
        declarationTag =
            PrototypeCapture.isActive
            ? PrototypeCapture.attributeTag(defaultValue: wrappedValue, options: [option]) : 0
    }

    /// Declares an attribute whose default is the initial value.
    @inlinable
    public init(wrappedValue: Value, _ options: AttributeOption...) {
        declarationTag =
            PrototypeCapture.isActive ? PrototypeCapture.attributeTag(defaultValue: wrappedValue, options: options) : 0
    }

    /// Declares an optional attribute whose default is `nil`.
    @inlinable
    public init() where Value: ExpressibleByNilLiteral {
        declarationTag =
            PrototypeCapture.isActive ? PrototypeCapture.attributeTag(defaultValue: nil as Value, options: []) : 0
    }

    /// Declares an optional attribute with one option whose default is `nil`.
    @inlinable
    public init(_ option: AttributeOption) where Value: ExpressibleByNilLiteral {
        declarationTag =
            PrototypeCapture.isActive ? PrototypeCapture.attributeTag(defaultValue: nil as Value, options: [option]) : 0
    }

    /// Declares an optional attribute whose default is `nil`.
    @inlinable
    public init(_ options: AttributeOption...) where Value: ExpressibleByNilLiteral {
        declarationTag =
            PrototypeCapture.isActive ? PrototypeCapture.attributeTag(defaultValue: nil as Value, options: options) : 0
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
            let index = PropertySlotCache.index(of: storageKeyPath, wrapped: wrappedKeyPath, declaredIn: Object.self)
            if let stored = object.storedValue(at: index), let value = Value(storedValue: stored) {
                return value
            }
            object.recordProbedRead(wrappedKeyPath)
            if let value = Value(storedValue: object.defaultStoredValue(at: index)) { return value }
            preconditionFailure("the default of \(Object.self)'s property #\(index) is no \(Value.self)")
        }
        set {
            let index = PropertySlotCache.index(of: storageKeyPath, wrapped: wrappedKeyPath, declaredIn: Object.self)
            object.setStoredValue(newValue.storedValue, at: index)
        }
    }
}

extension Attribute: PropertyIntrospection {
    func propertySeed(name: String, in session: PrototypeCapture.Session) -> PropertySeed {
        guard case .attribute(let defaultValue, let options) = session.declaration(declarationTag, property: name)
        else { preconditionFailure("the wrapper of '\(name)' recorded a relationship, not an attribute") }
        return .attribute(
            AttributeSeed(
                name: name, type: Value.attributeType, isOptional: Value.isOptionalType, defaultValue: defaultValue,
                options: options, transformerName: nil))
    }
}
