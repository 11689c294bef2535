import Foundation
import LogFormat

/// The validation rules of the new model checked against the migrated state, one graph (a whole state, or one
/// window of it) at a time: per entity, property and rule only a count and the few failing objects with the
/// smallest keys are kept, so the memory does not follow the number of failures.
///
/// The check is the model's one validator (``EntityDescription/ruleFailures(patterns:value:)``), the one a save
/// runs, on the rows of the state instead of managed objects. A custom ``ManagedObject/validate()`` needs the app's
/// objects and is not run.
struct MigrationValidation {
    private struct RuleKey: Hashable {
        var entityIndex: Int
        var propertyIndex: Int
        var rule: ValidationRuleKind
    }

    private struct Tally {
        var objectCount = 0
        /// The failing objects with the smallest keys, ascending.
        var examples: [(key: UInt64, entityIndex: Int, message: String)] = []
    }

    /// The new model, with its rules (a graph's model is read from the schema, which records no ranges, lengths or
    /// patterns).
    private let model: ObjectModel
    private let storeUUID: UUID
    private var patterns = CompiledPatterns()
    private var tallies: [RuleKey: Tally] = [:]

    init(model: ObjectModel, storeUUID: LogUUID) {
        self.model = model
        self.storeUUID = UUID(logUUID: storeUUID)
    }

    /// Whether `model` has a rule to check at all.
    static func hasRules(_ model: ObjectModel) -> Bool { model.entities.contains { !$0.validationRules.isEmpty } }

    /// Checks every live object of `graph` (whose entity indices are the new model's).
    mutating func check(_ graph: LogGraph) {
        guard let state = graph.state else { return }
        for entity in model.entities where !entity.validationRules.isEmpty && entity.index < state.tables.count {
            state.forEachRow(ofEntity: entity.index) { row in
                let failures = entity.ruleFailures(patterns: &patterns) { index in
                    index < row.values.count ? row.values[index] : nil
                }
                for failure in failures { note(failure, key: row.key, entity: entity) }
            }
        }
    }

    private mutating func note(_ failure: RuleFailure, key: UInt64, entity: EntityDescription) {
        // A rule on an inherited property is the declaring entity's: the report names the entity that declares it.
        let declaring = declaringEntity(of: failure.propertyIndex, in: entity)
        let ruleKey = RuleKey(entityIndex: declaring, propertyIndex: failure.propertyIndex, rule: failure.rule)
        var tally = tallies[ruleKey] ?? Tally()
        tally.objectCount += 1
        let limit = StoreMigration.ValidationFailure.exampleLimit
        if tally.examples.count < limit || key < tally.examples[tally.examples.count - 1].key {
            let position = tally.examples.firstIndex { $0.key > key } ?? tally.examples.count
            tally.examples.insert((key, entity.index, failure.message), at: position)
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
