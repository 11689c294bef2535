import Foundation
import Testing

@testable import EventGraph

/// A tally of marks; a mark's validation adds its amount to its tally (a validation that changes another object,
/// which Core Data advises against).
final class ValidatedTally: ManagedObject {
    @Attribute var name: String = ""
    @Attribute var total: Int64 = 0
    @Relationship(inverse: "tally") var marks: Set<ValidatedMark>
}

final class ValidatedMark: ManagedObject {
    @Attribute var amount: Int64 = 0
    /// Whether validation inserts a new tally (a change the save had not been asked to make).
    @Attribute var insertsATally: Bool = false
    @Relationship var tally: ValidatedTally?

    override func validate() throws {
        tally?.total += amount
        if insertsATally, let context {
            let spawned = ValidatedTally()
            context.insert(spawned)
            spawned.name = "spawned"
        }
    }
}

/// A save validates each inserted object and builds its insert operation in one pass (h73). A validation that
/// changes an inserted object whose operation was already built has its change saved, as when every object was
/// validated before any operation was built; a validation that inserts, deletes or changes an object the save had
/// not changed fails the save, naming that object, and leaves the store as it was. Before, both kinds of change
/// were left out of the save silently (and the first was then dropped from the context too).
@Suite("Objects changed by validation during a save")
struct ValidationChangesDuringSaveTests {
    static let model = try! ObjectModel(
        name: "Validated", version: "1", types: [ValidatedTally.self, ValidatedMark.self])

    /// A container of a new store in a directory that lives as long as the caller keeps it.
    static func open() throws -> (TemporaryDirectory, ModelContainer) {
        let directory = TemporaryDirectory()
        return (directory, try ModelContainer(path: directory.file(), model: model))
    }

    static func insertTally(_ name: String, in context: ObjectContext) -> ValidatedTally {
        let tally = ValidatedTally()
        context.insert(tally)
        tally.name = name
        return tally
    }

    static func totals(in container: ModelContainer) throws -> [String: Int64] {
        var totals: [String: Int64] = [:]
        for tally in try container.newBackgroundContext().fetch(FetchDescriptor<ValidatedTally>()) {
            totals[tally.name] = tally.total
        }
        return totals
    }

    @Test func aValidationThatChangesAnInsertedObjectBuiltBeforeItHasTheChangeSaved() throws {
        let (directory, container) = try Self.open()
        defer { withExtendedLifetime(directory) {} }
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        // The tally is inserted (and so validated and staged) before its marks.
        let tally = Self.insertTally("t", in: context)
        for amount in [2, 3] as [Int64] {
            let mark = ValidatedMark()
            context.insert(mark)
            mark.amount = amount
            mark.tally = tally
        }
        try context.save()
        #expect(tally.total == 5)
        #expect(!context.hasChanges)
        #expect(try Self.totals(in: container) == ["t": 5])
    }

    @Test func anUpdatedObjectsValidationThatChangesAnInsertedObjectHasTheChangeSaved() throws {
        let (directory, container) = try Self.open()
        defer { withExtendedLifetime(directory) {} }
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let mark = ValidatedMark()
        context.insert(mark)
        mark.amount = 4
        try context.save()

        // The mark is updated (validated after every insert); the new tally's operation is built before that.
        let tally = Self.insertTally("new", in: context)
        mark.tally = tally
        try context.save()
        #expect(try Self.totals(in: container) == ["new": 4])
    }

    @Test func aValidationThatInsertsAnObjectFailsTheSaveNamingIt() throws {
        let (directory, container) = try Self.open()
        defer { withExtendedLifetime(directory) {} }
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        _ = Self.insertTally("t", in: context)
        let mark = ValidatedMark()
        context.insert(mark)
        mark.insertsATally = true
        let error = #expect(throws: EventGraphError.self) { try context.save() }
        #expect(error?.code == .validation)
        let failure = error?.failures.first
        #expect(error?.failures.count == 1)
        #expect(failure?.entityName == "ValidatedTally")
        #expect(failure?.message.contains("was inserted by a validation") == true, "\(failure?.message ?? "")")
        let spawned = try #require(context.insertedObjects.first { ($0 as? ValidatedTally)?.name == "spawned" })
        #expect(failure?.objectID == spawned.objectID)
        // Nothing was saved; the context keeps its changes, the spawned tally among them.
        #expect(try Self.totals(in: container).isEmpty)
        #expect(context.hasChanges)
        #expect(context.insertedObjects.count == 3)
        // Without the inserting validation, the save goes through (with the tally validation inserted).
        mark.insertsATally = false
        try context.save()
        #expect(try Self.totals(in: container) == ["t": 0, "spawned": 0])
    }
}
