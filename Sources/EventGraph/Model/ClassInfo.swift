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

    init(objectClass: ManagedObject.Type, superclassInfo: ClassInfo?) {
        self.objectClass = objectClass
        self.superclassInfo = superclassInfo
        let first = objectClass.init()
        let second = objectClass.init()
        let seeds = ClassInfo.seeds(of: first)
        let secondSeeds = ClassInfo.seeds(of: second)
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
    }

    /// The property seeds of an instance, root class first.
    static func seeds(of instance: ManagedObject) -> [PropertySeed] {
        var levels: [[PropertySeed]] = []
        var mirror: Mirror? = Mirror(reflecting: instance)
        while let current = mirror, current.subjectType != ManagedObject.self {
            var level: [PropertySeed] = []
            for child in current.children {
                guard let label = child.label, let wrapper = child.value as? any PropertyIntrospection else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                level.append(wrapper.propertySeed(name: name))
            }
            levels.append(level)
            mirror = current.superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }

    /// Values of every attribute of an instance as its wrappers hold them (the per-instance defaults).
    static func instanceDefaults(of instance: ManagedObject) -> [AttributeValue?] {
        seeds(of: instance).map { seed in
            if case .attribute(let attribute) = seed { attribute.defaultValue } else { nil }
        }
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
