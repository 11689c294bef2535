import LogFormat

/// Implemented by the property wrappers so that model registration can describe a property from a prototype.
protocol PropertyIntrospection {
    /// The property's description, from what its wrapper recorded in `session` when the prototype was made (see
    /// `PrototypeCapture`).
    func propertySeed(name: String, in session: PrototypeCapture.Session) -> PropertySeed

    /// Where the wrapper keeps its `UInt16` tag, for ``PropertyStamps`` (`nil`: its accessor finds its property by
    /// key path, and it is not stamped).
    static var tagOffset: Int? { get }
}

/// What a property wrapper in a prototype instance says about its property.
enum PropertySeed {
    case attribute(AttributeSeed)
    case relationship(RelationshipSeed)

    var name: String {
        switch self {
        case .attribute(let seed): seed.name
        case .relationship(let seed): seed.name
        }
    }
}

struct AttributeSeed {
    var name: String
    var type: AttributeType
    var isOptional: Bool
    var defaultValue: AttributeValue
    var options: [AttributeOption]
    var transformerName: String?
}

struct RelationshipSeed {
    var name: String
    var destination: ManagedObject.Type
    var isToMany: Bool
    var isOrdered: Bool
    var inverseName: String?
    var deleteRule: DeleteRule
    var minimumCount: Int
    var maximumCount: Int
    var isOptional: Bool
    var originalName: String? = nil
}
