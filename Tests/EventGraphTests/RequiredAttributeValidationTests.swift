import Foundation
import Testing

@testable import EventGraph

final class Plate: ManagedObject {
    @Attribute var label: String = "plate"
    @Attribute var count: Int64 = 0
    @Attribute(.length(1...)) var code: String = "p"
    @Attribute var memo: String? = nil
}

/// A save asks an object whether a required attribute without value rules is null, read in place, instead of copying
/// its value (a copy of a string retains its storage, once per required attribute and new object of a bulk insert):
/// the same attributes fail, with the same messages.
@Suite("Required attributes checked in place")
struct RequiredAttributeValidationTests {
    static let model = try! ObjectModel(name: "Plates", version: "1", types: [Plate.self])

    private func failures(_ context: ObjectContext) -> [String] {
        do {
            try context.save()
            return []
        } catch {
            return error.failures.map { "\($0.propertyName ?? "-"): \($0.message)" }
        }
    }

    @Test func aRequiredAttributeSetToNullFailsANewAndAnUpdatedObject() throws {
        let container = try ModelContainer(inMemoryWith: Self.model)
        let context = container.newBackgroundContext(name: "writer")
        let plate = Plate()
        context.insert(plate)
        plate.setValue(.attribute(.null), forKey: "label")
        plate.setValue(.attribute(.null), forKey: "count")
        plate.setValue(.attribute(.null), forKey: "code")
        plate.setValue(.attribute(.null), forKey: "memo")
        #expect(failures(context) == ["label: is required", "count: is required", "code: is required"])
        plate.label = "a"
        plate.count = 2
        plate.code = "c"
        #expect(failures(context) == [])
        // An unset object reads its defaults: nothing fails.
        context.insert(Plate())
        #expect(failures(context) == [])
        // An update to null fails as well; a committed value does not.
        plate.setValue(.attribute(.null), forKey: "count")
        #expect(failures(context) == ["count: is required"])
        plate.count = 3
        #expect(failures(context) == [])
        try container.close()
    }

    @Test func theNullCheckReadsTheUnsavedValueInPlace() throws {
        let container = try ModelContainer(inMemoryWith: Self.model)
        let context = container.newBackgroundContext(name: "writer")
        let plate = Plate()
        context.insert(plate)
        let entity = plate.entity
        let label = try #require(entity.properties.firstIndex { $0.name == "label" })
        #expect(plate.pendingAttributeIsNull(at: label) == nil)
        plate.label = "x"
        #expect(plate.pendingAttributeIsNull(at: label) == false)
        plate.setValue(.attribute(.null), forKey: "label")
        #expect(plate.pendingAttributeIsNull(at: label) == true)
        try container.close()
    }

    @Test func aRuleThatIsOnlyRequiredReadsNoValueWhenTheCallerCanTell() throws {
        // label and count are only required: asked `isNull`, not read. code has a length: read. memo has no rule.
        let entity = try #require(Self.model.entity(named: "Plate"))
        var patterns = CompiledPatterns()
        var asked: [String] = []
        var read: [String] = []
        let failures = entity.ruleFailures(
            patterns: &patterns,
            isNull: { index in
                asked.append(entity.properties[index].name)
                return entity.properties[index].name == "count"
            },
            value: { index in
                read.append(entity.properties[index].name)
                return nil
            })
        #expect(failures.map { "\(entity.properties[$0.propertyIndex].name) \($0.rule)" } == ["count required"])
        #expect(asked == ["label", "count"])
        #expect(read == ["code"])
        // When the caller cannot tell (`nil`), the value is read, as without the closure.
        read = []
        _ = entity.ruleFailures(patterns: &patterns, isNull: { _ in nil }) { index in
            read.append(entity.properties[index].name)
            return nil
        }
        #expect(read == ["label", "count", "code"])
    }
}
