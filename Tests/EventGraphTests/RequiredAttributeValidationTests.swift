import Foundation
import Testing

@testable import EventGraph

final class Plate: ManagedObject {
    @Attribute var label: String = "plate"
    @Attribute var count: Int64 = 0
    @Attribute(.length(1...)) var code: String = "p"
    @Attribute var memo: String? = nil
}

/// A required attribute that is null fails the save of a new and of an updated object; defaults and values pass (no
/// other test set one to null; h94 tried reading the value in place, measured no gain and reverted it).
@Suite("Required attributes at save")
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
}
