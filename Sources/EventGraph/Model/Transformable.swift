import LogFormat

/// Declares a transformable attribute: any value type, stored as the bytes an ``AttributeTransformer`` makes.
///
/// ```swift
/// struct Thumbnail: Codable { var width: Int; var pixels: [UInt8] }
/// final class Event: ManagedObject {
///     @Transformable(by: CodableTransformer<Thumbnail>()) var thumbnail: Thumbnail?
/// }
/// ```
/// The value is decoded each time the property is read; keep large values behind a relationship or use
/// ``AttributeOption/externalStorage`` so they are read from the log only when touched.
@propertyWrapper
public struct Transformable<Transformer: AttributeTransformer> {
    let transformer: Transformer
    let options: [AttributeOption]

    /// Declares a transformable attribute whose default is `nil`.
    public init(by transformer: Transformer, _ options: AttributeOption...) {
        self.transformer = transformer
        self.options = options
    }

    /// Declares a transformable attribute; only `nil` is accepted as the initial value.
    public init(wrappedValue: Transformer.Value?, by transformer: Transformer, _ options: AttributeOption...) {
        precondition(wrappedValue == nil, "a @Transformable attribute's default value must be nil")
        self.transformer = transformer
        self.options = options
    }

    @available(*, unavailable, message: "@Transformable is only available on ManagedObject subclasses")
    public var wrappedValue: Transformer.Value? {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    /// Reads and writes the value through the enclosing object.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Transformer.Value?>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Transformer.Value? {
        get {
            let index = PropertySlotCache.index(of: storageKeyPath, wrapped: wrappedKeyPath, declaredIn: Object.self)
            guard case .transformable(let bytes) = object.storedAttributeValue(at: index) else { return nil }
            return try? object[keyPath: storageKeyPath].transformer.decode(bytes)
        }
        set {
            let index = PropertySlotCache.index(of: storageKeyPath, wrapped: wrappedKeyPath, declaredIn: Object.self)
            guard let newValue else {
                object.setStoredAttributeValue(.null, at: index)
                return
            }
            let transformer = object[keyPath: storageKeyPath].transformer
            do {
                object.setStoredAttributeValue(.transformable(try transformer.encode(newValue)), at: index)
            } catch {
                preconditionFailure("\(transformer.name) failed to encode a value of \(Object.self): \(error)")
            }
        }
    }
}

extension Transformable: PropertyIntrospection {
    static var tagOffset: Int? { nil }

    func propertySeed(name: String, in session: PrototypeCapture.Session) -> PropertySeed {
        .attribute(
            AttributeSeed(
                name: name, type: .transformable, isOptional: true, defaultValue: .null, options: options,
                transformerName: transformer.name))
    }
}
