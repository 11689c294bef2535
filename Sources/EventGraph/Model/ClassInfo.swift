import LogFormat

/// What a ``ManagedObject`` subclass declares, learned once from prototype instances through `Mirror`.
///
/// Properties are listed inherited first (in the superclass's order), then the class's own in declaration order;
/// a property therefore has the same index in a class and in all its subclasses.
final class ClassInfo: @unchecked Sendable {
    // @unchecked: every stored property is immutable; `PropertySeed` holds metatypes and value types only.
    let objectClass: ManagedObject.Type
    let superclassInfo: ClassInfo?
    let seeds: [PropertySeed]
    let indexByName: [String: Int]
    /// Whether some attribute's default differs between two fresh instances (for example `Date()`), so that an
    /// inserted object's defaults must be read from the instance instead of the model.
    let hasInstanceDefaults: Bool
    /// The indices of those attributes. Their prototype's value is no default at all (another process computes
    /// another one), so the model records none for them and every object records its own value.
    let dynamicDefaultIndices: Set<Int>

    /// Each property's default as ``Attribute``'s accessor reads it when an object holds no value (`.null` for a
    /// relationship; for a dynamic default, the first prototype's value, which only a probe reads).
    let defaultValues: [StoredValue]

    /// Where each wrapper of an instance keeps its tag, and the stamp with its property's index (see
    /// ``PropertyStamps``).
    let stampPlan: PropertyStamps.Plan

    init(objectClass: ManagedObject.Type, superclassInfo: ClassInfo?) {
        self.objectClass = objectClass
        self.superclassInfo = superclassInfo
        let seeds = ClassInfo.prototypeSeeds(of: objectClass)
        let secondSeeds = ClassInfo.prototypeSeeds(of: objectClass)
        var dynamicDefaultIndices: Set<Int> = []
        for (index, (a, b)) in zip(seeds, secondSeeds).enumerated() {
            if case .attribute(let x) = a, case .attribute(let y) = b, x.defaultValue != y.defaultValue {
                dynamicDefaultIndices.insert(index)
            }
        }
        var indexByName: [String: Int] = [:]
        for (index, seed) in seeds.enumerated() {
            precondition(
                indexByName.updateValue(index, forKey: seed.name) == nil,
                "\(objectClass) declares the property '\(seed.name)' twice")
        }
        self.seeds = seeds
        self.indexByName = indexByName
        self.hasInstanceDefaults = !dynamicDefaultIndices.isEmpty
        self.dynamicDefaultIndices = dynamicDefaultIndices
        self.defaultValues = seeds.map { seed in
            if case .attribute(let attribute) = seed { StoredValue(attribute.defaultValue) } else { .null }
        }
        self.stampPlan = PropertyStamps.plan(of: objectClass, indexByName: indexByName, seedCount: seeds.count)
    }

    /// The property seeds of a new prototype of a class, root class first: the instance is made while
    /// `PrototypeCapture` records what its wrappers declare (ordinary instances' wrappers hold nothing).
    static func prototypeSeeds(of objectClass: ManagedObject.Type) -> [PropertySeed] {
        let (prototype, session) = PrototypeCapture.capture(of: objectClass) { objectClass.init() }
        return seeds(of: prototype, in: session)
    }

    /// The property seeds of a prototype made in `session`, root class first.
    private static func seeds(of instance: ManagedObject, in session: PrototypeCapture.Session) -> [PropertySeed] {
        var levels: [[PropertySeed]] = []
        var mirror: Mirror? = Mirror(reflecting: instance)
        while let current = mirror, current.subjectType != ManagedObject.self {
            var level: [PropertySeed] = []
            for child in current.children {
                guard let label = child.label, let wrapper = child.value as? any PropertyIntrospection else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                level.append(wrapper.propertySeed(name: name, in: session))
            }
            levels.append(level)
            mirror = current.superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }

    /// Defaults computed anew (`Date()`, `UUID()`), by property index, from a new prototype: what a new object of a
    /// class with ``hasInstanceDefaults`` records as its own values. (Its wrappers keep nothing of the values its
    /// initializer computed, so they are computed again here, when the object is inserted or first read.)
    func freshDynamicDefaults() -> [Int: AttributeValue] {
        let seeds = ClassInfo.prototypeSeeds(of: objectClass)
        var values: [Int: AttributeValue] = [:]
        for index in dynamicDefaultIndices {
            if case .attribute(let attribute) = seeds[index] { values[index] = attribute.defaultValue }
        }
        return values
    }
}

/// The process-wide cache of ``ClassInfo`` by class.
enum ClassRegistry {
    private static let infos = LockedValue<[ObjectIdentifier: ClassInfo]>([:])

    static func info(for type: ManagedObject.Type) -> ClassInfo {
        if let info = infos.withLock({ $0[ObjectIdentifier(type)] }) { return info }
        // Built outside the lock: creating prototypes runs the class's initializers.
        let superInfo: ClassInfo?
        if let superclass = managedSuperclass(of: type) {
            superInfo = info(for: superclass)
        } else {
            superInfo = nil
        }
        let built = ClassInfo(objectClass: type, superclassInfo: superInfo)
        return infos.withLock { infos in
            if let existing = infos[ObjectIdentifier(type)] { return existing }
            infos[ObjectIdentifier(type)] = built
            return built
        }
    }

    /// The superclass when it is a strict subclass of ``ManagedObject``.
    static func managedSuperclass(of type: ManagedObject.Type) -> ManagedObject.Type? {
        guard let superclass = _getSuperclass(type), superclass != ManagedObject.self else { return nil }
        return superclass as? ManagedObject.Type
    }
}
