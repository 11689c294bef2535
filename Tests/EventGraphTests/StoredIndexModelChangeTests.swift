import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// The model versions of ``StoredIndexModelChangeTests``: one entity `Gadget` (x, y: String; z: Int64) whose
/// uniqueness constraints and indexes change from version to version.
enum GadgetModels {
    /// The store's first model: x unique (so x has a stored uniqueness index and a stored attribute index).
    final class Gadget: ManagedObject {
        override class var entityName: String { "Gadget" }
        @Attribute(.unique) var x: String = ""
        @Attribute var y: String = ""
        @Attribute var z: Int64 = 0
    }

    static let base = try! ObjectModel(name: "Gadgets", version: "1", types: [Gadget.self])

    /// The base with other constraints and indexes, and x renamed `xName` (its original name recorded), built from
    /// the base's recorded schema.
    static func model(version: String, unique: [[String]], indexes: [[String]] = [], xName: String = "x")
        -> ObjectModel
    {
        var schema = base.schema
        schema.versionIdentifier = version
        if xName != "x", case .attribute(var x) = schema.entities[0].properties[0] {
            x.originalName = x.name
            x.name = xName
            schema.entities[0].properties[0] = .attribute(x)
        }
        schema.entities[0].uniquenessConstraints = unique
        schema.entities[0].indexes = indexes
        return try! ObjectModel(schema: schema)
    }

    /// (a) The constraint dropped.
    static let noConstraint = model(version: "2a", unique: [])
    /// (b) The constraint moved to y.
    static let onY = model(version: "2b", unique: [["y"]])
    /// (c) The constraint made compound: (x, y).
    static let compound = model(version: "2c", unique: [["x", "y"]])
    /// (d) An index added on z (metadata: no migration).
    static let indexOnZ = model(version: "2d", unique: [["x"]], indexes: [["z"]])
    /// (e) x renamed `code` (through its original name), still unique.
    static let renamed = model(version: "2e", unique: [["code"]], xName: "code")
    /// A base with two constraints, x then y.
    static let twoConstraints = model(version: "1t", unique: [["x"], ["y"]])
    /// (f) The same two constraints declared in the other order: the same shape (constraints are a set), so the
    /// store opens without a migration, but each constraint's ordinal is the other's.
    static let twoConstraintsSwapped = model(version: "2f", unique: [["y"], ["x"]])
    /// A base with the compound constraint (x, y).
    static let compoundXY = model(version: "1c", unique: [["x", "y"]])
    /// (g) The compound constraint declared as (y, x): the same shape, its tuple in the other order.
    static let compoundYX = model(version: "2g", unique: [["y", "x"]])
}

/// A store whose checkpoint holds stored indexes (format 1.4) opened with a model whose uniqueness constraints or
/// indexes differ — by inferred migration (history kept or live state only) or directly when the shape is the
/// same — enforces uniqueness exactly per the new model, answers indexed fetches as a scan does, and verifies.
@Suite("Stored indexes across constraint and model changes")
struct StoredIndexModelChangeTests {
    static let count = 6_000

    /// How a model change reaches the store.
    enum Route: String, CaseIterable, CustomTestStringConvertible {
        /// `ModelContainer` opens with the new model (inferred migration keeping history when the shape differs).
        case open
        /// An explicit live-state-only migration, then open.
        case liveState
        var testDescription: String { rawValue }
    }

    /// One model change: the base the store is written with, the new model, the attribute names in the new model
    /// (x may be renamed), and the tuples that must be refused and accepted.
    struct Change: Sendable, CustomTestStringConvertible {
        let name: String
        let base: ObjectModel
        let target: ObjectModel
        /// The new model's name of the base's x.
        let xName: String
        /// Whether the shape is the same (the store opens without a migration; a live-state migration is moot).
        let isSameShape: Bool
        /// (x, y) tuples a save must refuse under the new model.
        let refused: [(String, String)]
        /// (x, y) tuples a save must accept under the new model (each new as a whole).
        let accepted: [(String, String)]
        var testDescription: String { name }
    }

    static let changes: [Change] = [
        Change(
            name: "a constraint dropped", base: GadgetModels.base, target: GadgetModels.noConstraint,
            xName: "x", isSameShape: false, refused: [], accepted: [("x-00005", "new-1")]),
        Change(
            name: "a constraint moved to y", base: GadgetModels.base, target: GadgetModels.onY,
            xName: "x", isSameShape: false, refused: [("new-2", "y-00007")], accepted: [("x-00005", "new-3")]),
        Change(
            name: "a constraint made compound", base: GadgetModels.base, target: GadgetModels.compound,
            xName: "x", isSameShape: false, refused: [("x-00006", "y-00006")], accepted: [("x-00005", "new-4")]),
        Change(
            name: "an index added on z", base: GadgetModels.base, target: GadgetModels.indexOnZ,
            xName: "x", isSameShape: true, refused: [("x-00005", "new-5")], accepted: [("new-6", "y-00007")]),
        Change(
            name: "x renamed through its original name", base: GadgetModels.base,
            target: GadgetModels.renamed, xName: "code", isSameShape: false,
            refused: [("x-00005", "new-7")], accepted: [("new-8", "y-00007")]),
        Change(
            name: "two constraints declared in the other order", base: GadgetModels.twoConstraints,
            target: GadgetModels.twoConstraintsSwapped, xName: "x", isSameShape: true,
            refused: [("x-00005", "new-9"), ("new-10", "y-00007")], accepted: [("new-11", "new-12")]),
        Change(
            name: "a compound constraint declared in the other order", base: GadgetModels.compoundXY,
            target: GadgetModels.compoundYX, xName: "x", isSameShape: true,
            refused: [("x-00006", "y-00006"), ("x-04321", "y-04321")],
            accepted: [("x-00005", "y-00006"), ("x-00006", "new-13")]),
    ]

    static func x(_ index: Int) -> String { "x-" + String(100_000 + index).dropFirst() }
    static func y(_ index: Int) -> String { "y-" + String(100_000 + index).dropFirst() }

    /// A compacted store of ``count`` gadgets under `model`: x = x-NNNNN, y = y-NNNNN, z = index / 10; then a
    /// short tail (one gadget changed, one deleted) so that the stored entries are not the whole answer.
    static func writeStore(at path: String, model: ObjectModel) throws {
        let container = try ModelContainer(path: path, model: model)
        let context = container.newBackgroundContext()
        for index in 0..<count {
            let gadget = context.insert(entityNamed: "Gadget")
            gadget.setValue(.attribute(.string(x(index))), forKey: "x")
            gadget.setValue(.attribute(.string(y(index))), forKey: "y")
            gadget.setValue(.attribute(.int64(Int64(index / 10))), forKey: "z")
        }
        try context.save()
        _ = try container.compact()
        let tail = container.newBackgroundContext()
        let changed = try tail.fetch(FetchDescriptor(entityName: "Gadget", filter: .equal("x", .string(x(10)))))
        try #require(changed.count == 1)
        changed[0].setValue(.attribute(.string("x-changed")), forKey: "x")
        changed[0].setValue(.attribute(.string("y-changed")), forKey: "y")
        let deleted = try tail.fetch(FetchDescriptor(entityName: "Gadget", filter: .equal("x", .string(x(11)))))
        try #require(deleted.count == 1)
        tail.delete(deleted[0])
        try tail.save()
        try container.close()
    }

    static func open(_ path: String, change: Change, route: Route) throws -> ModelContainer {
        if route == .liveState {
            try StoreMigration.migrate(
                path: path, to: change.target, options: StoreMigration.Options(historyMode: .liveState))
        }
        return try ModelContainer(path: path, model: change.target)
    }

    @Test(arguments: changes, Route.allCases)
    func uniquenessFetchesAndVerifyFollowTheNewModel(change: Change, route: Route) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try Self.writeStore(at: path, model: change.base)
        // The checkpoint stores indexes, so the rest of the test is about them.
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        try #require(!listed.indexes.isEmpty)

        let container = try Self.open(path, change: change, route: route)
        try Self.expectUniqueness(change, container: container, phase: "open")
        try Self.expectIndexedFetchesMatchAScan(change, container: container, phase: "open")
        try container.close()
        #expect(try StoredCheckpointIndexTests.storedIndexIssues(of: path).isEmpty, "\(change.name) \(route)")

        // Compacted again under the new model: its stored indexes are the new model's.
        let again = try ModelContainer(path: path, model: change.target)
        _ = try again.compact()
        try again.close()
        #expect(try StoredCheckpointIndexTests.storedIndexIssues(of: path).isEmpty, "\(change.name) recompacted")
        let reopened = try ModelContainer(path: path, model: change.target)
        defer { try? reopened.close() }
        try Self.expectIndexedFetchesMatchAScan(change, container: reopened, phase: "recompacted")
    }

    /// Each refused tuple is refused (a missed duplicate is a bug), each accepted one saved (a false duplicate from
    /// a stale index is a bug).
    static func expectUniqueness(_ change: Change, container: ModelContainer, phase: String) throws {
        for (x, y) in change.refused {
            let context = container.newBackgroundContext()
            let gadget = context.insert(entityNamed: "Gadget")
            gadget.setValue(.attribute(.string(x)), forKey: change.xName)
            gadget.setValue(.attribute(.string(y)), forKey: "y")
            #expect(throws: EventGraphError.self, "\(change.name) \(phase): (\(x), \(y)) must be refused") {
                try context.save()
            }
        }
        for (x, y) in change.accepted {
            let context = container.newBackgroundContext()
            let gadget = context.insert(entityNamed: "Gadget")
            gadget.setValue(.attribute(.string(x)), forKey: change.xName)
            gadget.setValue(.attribute(.string(y)), forKey: "y")
            #expect(throws: Never.self, "\(change.name) \(phase): (\(x), \(y)) must be accepted") {
                try context.save()
            }
        }
    }

    /// Fetches by x, y and z (indexed or not, per the model) find exactly what filtering every object finds.
    static func expectIndexedFetchesMatchAScan(_ change: Change, container: ModelContainer, phase: String) throws {
        let context = container.newBackgroundContext()
        let all = try context.fetch(FetchDescriptor(entityName: "Gadget"))
        func scan(_ key: String, _ value: StoredValue) -> Set<ObjectID> {
            Set(all.filter { $0.value(forKey: key).storedValue == value }.map(\.objectID))
        }
        func fetched(_ key: String, _ value: StoredValue) throws -> Set<ObjectID> {
            Set(try context.fetch(FetchDescriptor(entityName: "Gadget", filter: .equal(key, value))).map(\.objectID))
        }
        var probes: [(String, StoredValue)] = []
        for index in [0, 5, 10, 11, 4_321, count - 1] {
            probes.append((change.xName, .string(x(index))))
            probes.append(("y", .string(y(index))))
            probes.append(("z", .int64(Int64(index / 10))))
        }
        probes += [(change.xName, .string("x-changed")), ("y", .string("y-changed")), ("y", .string("new-3"))]
        for (key, value) in probes {
            #expect(try fetched(key, value) == scan(key, value), "\(change.name) \(phase): \(key) == \(value)")
        }
    }

    /// The same constraints declared in another order keep using the stored indexes (each found by its attribute
    /// names), and so does a compound constraint whose attributes come in another order: the index is read with
    /// each tuple put in the order it was written in (``CheckpointIndex/storedOrder``), instead of building the
    /// entity's entries from every one of its chunks.
    @Test func aReorderedConstraintAndAReorderedTupleUseTheirStoredIndexes() throws {
        let directory = TemporaryDirectory()
        try Self.writeStore(at: directory.file("two"), model: GadgetModels.twoConstraints)
        let swapped = try ModelContainer(path: directory.file("two"), model: GadgetModels.twoConstraintsSwapped)
        let state = swapped.store.state.withLock { $0 }
        // In the new model's order, each the index of its own attribute.
        #expect(state.storedUniqueIndexes.map { $0.constraint?.propertyNames } == [["y"], ["x"]])
        #expect(state.storedUniqueIndexes.map { $0.constraint?.ordinal } == [0, 1])
        #expect(try state.storedUniqueIndexes[0].storedKeys(matching: [.string(Self.y(7))]).count == 1)
        #expect(try state.storedUniqueIndexes[1].storedKeys(matching: [.string(Self.x(7))]).count == 1)
        #expect(state.pendingUniqueEntities.isEmpty)
        try swapped.close()

        try Self.writeStore(at: directory.file("compound"), model: GadgetModels.compoundXY)
        let reversed = try ModelContainer(path: directory.file("compound"), model: GadgetModels.compoundYX)
        defer { try? reversed.close() }
        let reversedState = reversed.store.state.withLock { $0 }
        let index = try #require(reversedState.storedUniqueIndexes.first)
        #expect(reversedState.storedUniqueIndexes.count == 1)
        #expect(index.constraint?.propertyNames == ["y", "x"])
        #expect(index.storedOrder == [1, 0])
        #expect(reversedState.pendingUniqueEntities.isEmpty)
        // A tuple in the constraint's order (y, x) is found through the index written as (x, y).
        #expect(try index.keys(matching: [.string(Self.y(7)), .string(Self.x(7))]).count == 1)
        #expect(try index.keys(matching: [.string(Self.x(7)), .string(Self.y(7))]).isEmpty)
        // Uniqueness follows: a taken tuple is refused, a free one (and the tail's changed one's old) accepted, and
        // the entity's chunks were not read to build entries.
        let change = try #require(Self.changes.first { $0.target === GadgetModels.compoundYX })
        try Self.expectUniqueness(change, container: reversed, phase: "reversed")
        #expect(reversed.store.state.withLock { $0.pendingUniqueEntities.isEmpty })
    }

    /// A store opened with the model its log records (tools, `ModelContainer(path:)`) follows the latest schema
    /// frame; when that frame declares the constraints in another order than the checkpoint's, uniqueness and
    /// fetches still follow it. The uniqueness entries are renumbered and the stored indexes kept: no entity becomes
    /// pending, so no entries are built from the chunks, at open or by the checks. (Before, every such entity's
    /// stored uniqueness indexes were dropped and the entity made pending: its entries were built from every one of
    /// its chunks on the first check.)
    @Test(arguments: [
        (GadgetModels.twoConstraints, GadgetModels.twoConstraintsSwapped, "two constraints swapped"),
        (GadgetModels.compoundXY, GadgetModels.compoundYX, "a compound constraint reversed"),
    ])
    func aStoreOpenedWithItsRecordedModelFollowsTheLatestSchemaFrame(
        base: ObjectModel, target: ObjectModel, name: String
    ) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try Self.writeStore(at: path, model: base)
        // Opening with the reordered model records it in a schema frame after the checkpoint.
        let container = try ModelContainer(path: path, model: target)
        let context = container.newBackgroundContext()
        let gadget = context.insert(entityNamed: "Gadget")
        gadget.setValue(.attribute(.string("tail-x")), forKey: "x")
        gadget.setValue(.attribute(.string("tail-y")), forKey: "y")
        try context.save()
        try container.close()

        let change = try #require(Self.changes.first { $0.target === target })
        let recorded = try ModelContainer(path: path)
        defer { try? recorded.close() }
        let state = recorded.store.state.withLock { $0 }
        #expect(state.pendingUniqueEntities.isEmpty, "\(name)")
        // Each stored index now answers for the new model's constraint over its attributes.
        let constraints = target.entities[0].uniqueConstraints
        #expect(state.storedUniqueIndexes.count == constraints.count, "\(name)")
        for index in state.storedUniqueIndexes {
            let constraint = try #require(index.constraint)
            #expect(constraints[constraint.ordinal] == constraint, "\(name)")
        }
        try Self.expectUniqueness(change, container: recorded, phase: "recorded model")
        // The tail's entries, made under the old order before the reordering frame, follow too: gadget 10 was
        // changed to (x-changed, y-changed), which is taken, and gave up (x-00010, y-00010).
        for (x, y, isTaken) in [("x-changed", "y-changed", true), (Self.x(10), Self.y(10), false)] {
            let context = recorded.newBackgroundContext()
            let gadget = context.insert(entityNamed: "Gadget")
            gadget.setValue(.attribute(.string(x)), forKey: "x")
            gadget.setValue(.attribute(.string(y)), forKey: "y")
            if isTaken {
                #expect(throws: EventGraphError.self, "\(name): (\(x), \(y))") { try context.save() }
            } else {
                #expect(throws: Never.self, "\(name): (\(x), \(y))") { try context.save() }
            }
        }
        #expect(recorded.store.state.withLock { $0.pendingUniqueEntities.isEmpty }, "\(name)")
        try Self.expectIndexedFetchesMatchAScan(change, container: recorded, phase: "recorded model")
    }
}
