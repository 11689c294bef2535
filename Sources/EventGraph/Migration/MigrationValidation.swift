import Foundation
import LogFormat

/// The validation rules of the new model checked against the migrated state: per entity, property and rule only a
/// count and the few failing objects with the smallest keys are reported.
///
/// The check is the model's one validator (``EntityDescription/ruleFailures(patterns:checking:isNull:value:)``), the
/// one a save runs, on the values of the state instead of managed objects. It runs in one of two ways:
/// - on a state built as a graph (``check(_:)``): the whole state when the run builds it anyway, or each window of
///   it — what a rule on a relationship needs (its value also changes by the other side's operations);
/// - on the stream of mapped records (``track(_:)``), when every rule that can fail is on an attribute: an
///   attribute's value is whatever the last record that names it says, so the objects that fail are known as the
///   log is read, and no state is built. Only their keys are kept; the messages of the few reported are taken from
///   one more pass that builds just those objects (``sampleObjects``, ``addExamples(from:)``).
///
/// A custom ``ManagedObject/validate()`` needs the app's objects and is not run.
struct MigrationValidation {
    private struct RuleKey: Hashable {
        var entityIndex: Int
        var propertyIndex: Int
        var rule: ValidationRuleKind
    }

    private struct Tally {
        var objectCount = 0
        /// The failing objects with the smallest keys, ascending (their entity is the object's own).
        var examples: [(key: UInt64, entityIndex: Int, message: String)] = []
    }

    /// One attribute of one entity (the object's own).
    private struct Slot: Hashable {
        var entityIndex: Int
        var propertyIndex: Int
    }

    /// The new model, with its rules (a graph's model is read from the schema, which records no ranges, lengths or
    /// patterns).
    private let model: ObjectModel
    private let storeUUID: UUID
    private var patterns = CompiledPatterns()
    private var tallies: [RuleKey: Tally] = [:]
    /// While the records are tracked: per attribute with a rule, the objects that break one, each with the rules
    /// it breaks (bit `n`: `ValidationRuleKind.allCases[n]`).
    private var failing: [Slot: [UInt64: UInt8]] = [:]
    /// Whether the records are tracked (see the type's documentation).
    let tracksRecords: Bool

    /// A check of `model`'s rules; `tracksRecords` asks for the streamed check (possible only when
    /// ``needsState(_:)`` is false).
    init(model: ObjectModel, storeUUID: LogUUID, tracksRecords: Bool) {
        self.model = model
        self.storeUUID = UUID(logUUID: storeUUID)
        self.tracksRecords = tracksRecords && !Self.needsState(model)
    }

    /// Whether `model` has a rule that some value can break.
    static func hasRules(_ model: ObjectModel) -> Bool {
        model.entities.contains { $0.validationRules.contains(where: \.canFail) }
    }

    /// Whether `model` has a rule only a built state can check: one on a relationship that can fail.
    static func needsState(_ model: ObjectModel) -> Bool {
        model.entities.contains { $0.validationRules.contains { $0.isRelationship && $0.canFail } }
    }

    // MARK: - A built state

    /// Checks every live object of `graph` (whose entity indices are the new model's).
    mutating func check(_ graph: LogGraph) {
        guard let state = graph.state else { return }
        for entity in model.entities where entity.validationRules.contains(where: \.canFail) {
            guard entity.index < state.tables.count else { continue }
            state.forEachRow(ofEntity: entity.index) { row in
                let failures = entity.ruleFailures(patterns: &patterns) { index in
                    index < row.values.count ? row.values[index] : nil
                }
                for failure in failures {
                    note(
                        failure.rule, of: failure.propertyIndex, key: row.key, entity: entity, message: failure.message)
                }
            }
        }
    }

    private mutating func note(
        _ rule: ValidationRuleKind, of propertyIndex: Int, key: UInt64, entity: EntityDescription, message: String
    ) {
        // A rule on an inherited property is the declaring entity's: the report names the entity that declares it.
        let ruleKey = RuleKey(
            entityIndex: declaringEntity(of: propertyIndex, in: entity), propertyIndex: propertyIndex, rule: rule)
        var tally = tallies[ruleKey] ?? Tally()
        tally.objectCount += 1
        let limit = StoreMigration.ValidationFailure.exampleLimit
        if tally.examples.count < limit || key < tally.examples[tally.examples.count - 1].key {
            let position = tally.examples.firstIndex { $0.key > key } ?? tally.examples.count
            tally.examples.insert((key, entity.index, message), at: position)
            if tally.examples.count > limit { tally.examples.removeLast() }
        }
        tallies[ruleKey] = tally
    }

    /// The entity, `entity` or an ancestor, that declares the property at `index` (inherited properties come first
    /// and keep their indices).
    private func declaringEntity(of index: Int, in entity: EntityDescription) -> Int {
        var declaring = entity
        while let parent = declaring.superentityIndex, index < model.entities[parent].properties.count {
            declaring = model.entities[parent]
        }
        return declaring.index
    }

    // MARK: - The stream of records

    /// Follows the attribute values a mapped transaction sets.
    mutating func track(_ changeset: Changeset) {
        guard tracksRecords else { return }
        for operation in changeset.operations {
            switch operation {
            case .insert(let object, let changes):
                track(object, changes, isWhole: true)
            case .update(let object, let changes):
                track(object, changes, isWhole: false)
            case .delete(let object):
                guard let entity = entity(of: object) else { continue }
                for rule in entity.validationRules where !rule.isRelationship {
                    failing[Slot(entityIndex: entity.index, propertyIndex: rule.index)]?[object.key] = nil
                }
            case .relate:
                break
            }
        }
    }

    /// Follows the objects of a mapped checkpoint chunk (whole objects, as inserts).
    mutating func track(_ chunk: CheckpointChunk) {
        guard tracksRecords else { return }
        for record in chunk.records { track(record.object, record.properties, isWhole: true) }
    }

    /// Forgets what was tracked: a checkpoint of the old log replaces the state.
    mutating func trackCheckpointBegin() {
        failing = [:]
    }

    private func entity(of object: ObjectReference) -> EntityDescription? {
        guard object.storeIndex == 0, Int(object.entityIndex) < model.entities.count else { return nil }
        return model.entities[Int(object.entityIndex)]
    }

    /// Checks the attribute rules of what `changes` sets (`isWhole`: every rule; a property it leaves out has its
    /// default) and notes which of them the object now breaks.
    private mutating func track(_ object: ObjectReference, _ changes: [PropertyChange], isWhole: Bool) {
        guard let entity = entity(of: object), entity.validationRules.contains(where: { !$0.isRelationship }) else {
            return
        }
        func given(_ index: Int) -> PropertyChange? { changes.last { Int($0.propertyIndex) == index } }
        let failures = entity.ruleFailures(
            patterns: &patterns,
            checking: { index in entity.properties[index].relationship == nil && (isWhole || given(index) != nil) },
            value: { given($0)?.value })
        for rule in entity.validationRules where !rule.isRelationship && (isWhole || given(rule.index) != nil) {
            var mask: UInt8 = 0
            for failure in failures where failure.propertyIndex == rule.index {
                mask |= 1 << ValidationRuleKind.allCases.firstIndex(of: failure.rule)!
            }
            let slot = Slot(entityIndex: entity.index, propertyIndex: rule.index)
            if mask != 0 {
                failing[slot, default: [:]][object.key] = mask
            } else if failing[slot]?[object.key] != nil {
                failing[slot]![object.key] = nil
            }
        }
    }

    /// The objects to report as examples of what the records broke: per attribute and rule, those with the
    /// smallest keys.
    var sampleObjects: Set<ObjectReference> {
        var objects: Set<ObjectReference> = []
        for (slot, keys) in failing {
            for bit in ValidationRuleKind.allCases.indices {
                let breaking = keys.lazy.filter { $0.value & (1 << bit) != 0 }.map(\.key)
                for key in Self.smallest(breaking, StoreMigration.ValidationFailure.exampleLimit) {
                    objects.insert(ObjectReference(entityIndex: UInt32(slot.entityIndex), key: key))
                }
            }
        }
        return objects
    }

    /// Counts what the records broke, and takes the examples' messages from `graph`, the state of
    /// ``sampleObjects`` (checked again by the same validator).
    mutating func addExamples(from graph: LogGraph) {
        var counted: [RuleKey: Int] = [:]
        for (slot, keys) in failing {
            let entity = model.entities[slot.entityIndex]
            for (bit, rule) in ValidationRuleKind.allCases.enumerated() {
                let breaking = keys.lazy.filter { $0.value & (1 << bit) != 0 }.map(\.key)
                var count = 0
                for _ in breaking { count += 1 }
                guard count > 0 else { continue }
                let declaring = declaringEntity(of: slot.propertyIndex, in: entity)
                counted[RuleKey(entityIndex: declaring, propertyIndex: slot.propertyIndex, rule: rule), default: 0] +=
                    count
                for key in Self.smallest(breaking, StoreMigration.ValidationFailure.exampleLimit) {
                    let row = graph.state?.row(entityIndex: entity.index, key: key)
                    let failures = row.map { row in
                        entity.ruleFailures(patterns: &patterns, checking: { $0 == slot.propertyIndex }) { index in
                            index < row.values.count ? row.values[index] : nil
                        }
                    }
                    let message = failures?.first { $0.rule == rule }?.message ?? "(its value was not found again)"
                    note(rule, of: slot.propertyIndex, key: key, entity: entity, message: message)
                }
            }
        }
        // The examples were noted one by one; the counts are the records'.
        for (key, count) in counted { tallies[key]?.objectCount = count }
        failing = [:]
    }

    private static func smallest<S: Sequence>(_ keys: S, _ limit: Int) -> [UInt64] where S.Element == UInt64 {
        var smallest: [UInt64] = []
        for key in keys where smallest.count < limit || key < smallest[smallest.count - 1] {
            smallest.insert(key, at: smallest.firstIndex { $0 > key } ?? smallest.count)
            if smallest.count > limit { smallest.removeLast() }
        }
        return smallest
    }

    // MARK: - The report

    /// What was found, by entity name, property name and rule.
    var failures: [StoreMigration.ValidationFailure] {
        tallies.map { key, tally in
            let entity = model.entities[key.entityIndex]
            return StoreMigration.ValidationFailure(
                entityName: entity.name, propertyName: entity.properties[key.propertyIndex].name, rule: key.rule,
                objectCount: tally.objectCount,
                examples: tally.examples.map {
                    StoreMigration.ValidationFailure.Example(
                        objectID: ObjectID(
                            storeUUID: storeUUID, entityName: model.entities[$0.entityIndex].name, key: $0.key),
                        message: $0.message)
                })
        }
        .sorted {
            let order = ValidationRuleKind.allCases
            return ($0.entityName, $0.propertyName, order.firstIndex(of: $0.rule)!)
                < ($1.entityName, $1.propertyName, order.firstIndex(of: $1.rule)!)
        }
    }
}
