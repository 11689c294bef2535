import LogFormat

/// Declares a persistent attribute of a ``ManagedObject`` subclass.
///
/// Reading and writing the property is plain Swift; the value lives in the object's context and store, not in
/// the wrapper. The initial value is the attribute's default, which the model records once for the entity (the
/// wrapper keeps neither it nor the options, so an object costs nothing per attribute). A default computed anew for
/// each object (`Date()`, `UUID()`) is computed for an object when it is inserted, or when it is read before that,
/// and kept from then on. Making an object evaluates neither the initial values nor the options (they are
/// autoclosures, which the model calls when it builds the entity): a fetch pays nothing for them per object.
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

    // The initial value and the options are taken as autoclosures, evaluated only while a prototype is being built
    // (``PrototypeCapture/isActive``): an object that a fetch makes ran each option's expression and destroyed its
    // value, and a default such as `URL(string: "…")!` parsed its text, for every attribute of every object (`Post`'s
    // three options were a quarter of its initializer, which a fetch of every post runs for each). Two or more
    // options take the first two apart, so that the common cases build no array per object.

    /// Declares an attribute whose default is the initial value.
    @inlinable
    public init(wrappedValue: @autoclosure () -> Value) {
        declarationTag =
            PrototypeCapture.isActive ? PrototypeCapture.attributeTag(defaultValue: wrappedValue(), options: []) : 0
    }

    /// Declares an attribute with one option whose default is the initial value.
    @inlinable
    public init(wrappedValue: @autoclosure () -> Value, _ option: @autoclosure () -> AttributeOption) {
        declarationTag =
            PrototypeCapture.isActive
            ? PrototypeCapture.attributeTag(defaultValue: wrappedValue(), options: [option()]) : 0
    }

    /// Declares an attribute with several options whose default is the initial value.
    @inlinable
    public init(
        wrappedValue: @autoclosure () -> Value, _ first: @autoclosure () -> AttributeOption,
        _ second: @autoclosure () -> AttributeOption, _ more: AttributeOption...
    ) {
        declarationTag =
            PrototypeCapture.isActive
            ? PrototypeCapture.attributeTag(defaultValue: wrappedValue(), options: [first(), second()] + more) : 0
    }

    /// Declares an optional attribute whose default is `nil`.
    @inlinable
    public init() where Value: ExpressibleByNilLiteral {
        declarationTag =
            PrototypeCapture.isActive ? PrototypeCapture.attributeTag(defaultValue: nil as Value, options: []) : 0
    }

    /// Declares an optional attribute with one option whose default is `nil`.
    @inlinable
    public init(_ option: @autoclosure () -> AttributeOption) where Value: ExpressibleByNilLiteral {
        declarationTag =
            PrototypeCapture.isActive
            ? PrototypeCapture.attributeTag(defaultValue: nil as Value, options: [option()]) : 0
    }

    /// Declares an optional attribute with several options whose default is `nil`.
    @inlinable
    public init(
        _ first: @autoclosure () -> AttributeOption, _ second: @autoclosure () -> AttributeOption,
        _ more: AttributeOption...
    ) where Value: ExpressibleByNilLiteral {
        declarationTag =
            PrototypeCapture.isActive
            ? PrototypeCapture.attributeTag(defaultValue: nil as Value, options: [first(), second()] + more) : 0
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
            let index = PropertyStamps.index(in: object[keyPath: storageKeyPath].declarationTag, of: object)
            if let stored = object.storedValue(at: index), let value = Value(storedValue: stored) {
                return value
            }
            if let value = Value(storedValue: object.defaultStoredValue(at: index)) { return value }
            preconditionFailure("the default of \(Object.self)'s property #\(index) is no \(Value.self)")
        }
        set {
            let index = PropertyStamps.index(in: object[keyPath: storageKeyPath].declarationTag, of: object)
            object.setStoredValue(newValue.storedValue, at: index, through: wrappedKeyPath)
        }
    }
}

extension Attribute: PropertyIntrospection {
    static var tagOffset: Int? { MemoryLayout<Self>.offset(of: \Self.declarationTag) }

    func propertySeed(name: String, in session: PrototypeCapture.Session) -> PropertySeed {
        guard case .attribute(let defaultValue, let options) = session.declaration(declarationTag, property: name)
        else { preconditionFailure("the wrapper of '\(name)' recorded a relationship, not an attribute") }
        return .attribute(
            AttributeSeed(
                name: name, type: Value.attributeType, isOptional: Value.isOptionalType, defaultValue: defaultValue,
                options: options, transformerName: nil))
    }
}
