import Foundation
import LogFormat
import Testing

@testable import EventGraph

final class Draft: ManagedObject {
    @Attribute(.unique) var number: Int64 = 0
    @Attribute var title: String = "Untitled"
    @Attribute var body: String = ""
    @Attribute var words: Int64 = 0
    @Attribute(.transient) var cursor: Int64 = 0
}

/// A save's insert of a new object lists the object's persistent unsaved values that differ from their defaults, in
/// property order. When that is every unsaved value, the insert shares the object's own array (sorted in place)
/// instead of copying each value into one of its own (`ManagedObject.insertChanges()`).
@Suite("A new object's insert shares its unsaved values")
struct InsertChangesTests {
    static let model = try! ObjectModel(name: "Drafts", version: "1", types: [Draft.self])

    private static func property(_ name: String, of object: ManagedObject) throws -> UInt32 {
        UInt32(try #require(object.entity.properties.firstIndex { $0.name == name }))
    }

    /// A store in memory, a context that writes and a new draft inserted into it.
    private static func writerWithADraft() throws -> (ModelContainer, ObjectContext, Draft) {
        let container = try ModelContainer(inMemoryWith: model)
        let context = container.newBackgroundContext(name: "writer")
        let draft = Draft()
        context.insert(draft)
        return (container, context, draft)
    }

    private static func sharesStorage(_ changes: [PropertyChange], with object: ManagedObject) -> Bool {
        changes.withUnsafeBufferPointer { changes in
            object.pending.withUnsafeBufferPointer { $0.baseAddress == changes.baseAddress }
        }
    }

    @Test func theInsertOfValuesSetOutOfOrderIsTheObjectsArraySorted() throws {
        let (container, context, draft) = try Self.writerWithADraft()
        draft.words = 3
        draft.body = "three words here"
        draft.number = 7
        draft.title = "A draft"
        let changes = draft.insertChanges()
        let expected = try ["number", "title", "body", "words"].map { try Self.property($0, of: draft) }
        #expect(changes.map(\.propertyIndex) == expected)
        #expect(changes[1].value == .attribute(.string("A draft")))
        #expect(Self.sharesStorage(changes, with: draft), "the insert is the object's own array")
        #expect(draft.title == "A draft" && draft.words == 3 && draft.number == 7)
        // A change after the insert was built copies the object's array: the insert keeps the values it had.
        draft.title = "Changed"
        #expect(changes[1].value == .attribute(.string("A draft")))
        #expect(!Self.sharesStorage(changes, with: draft) && draft.title == "Changed")
        try context.save()
        let reader = container.newBackgroundContext(name: "reader")
        let saved = try reader.fetch(FetchDescriptor<Draft>())
        #expect(saved.map(\.title) == ["Changed"] && saved.map(\.body) == ["three words here"])
        try container.close()
    }

    @Test func defaultsAndTransientValuesAreLeftOutOfACopy() throws {
        let (container, context, draft) = try Self.writerWithADraft()
        draft.title = "Kept"
        draft.body = ""  // its default
        draft.cursor = 5  // transient
        draft.number = 1
        let changes = draft.insertChanges()
        let expected = try ["number", "title"].map { try Self.property($0, of: draft) }
        #expect(changes.map(\.propertyIndex) == expected)
        #expect(!Self.sharesStorage(changes, with: draft), "a filtered insert is an array of its own")
        #expect(draft.cursor == 5 && draft.body == "" && draft.title == "Kept")
        try context.save()
        #expect(draft.cursor == 5, "the save keeps the transient value")
        try container.close()
    }

    @Test func aFailedSaveLeavesTheSharedValuesWithTheObject() throws {
        let (container, context, first) = try Self.writerWithADraft()
        first.title = "First"
        first.number = 1
        try context.save()
        let second = Draft()
        context.insert(second)
        second.title = "Second"
        second.number = 1  // taken by `first`
        #expect(throws: EventGraphError.self) { try context.save() }
        #expect(second.isInserted && second.title == "Second" && second.number == 1)
        second.number = 2
        try context.save()
        let reader = container.newBackgroundContext(name: "reader")
        let saved = try reader.fetch(FetchDescriptor<Draft>(sortBy: [SortDescriptor(\.number)]))
        #expect(saved.map(\.title) == ["First", "Second"])
        try container.close()
    }
}
